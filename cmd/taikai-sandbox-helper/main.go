//go:build linux

// Command taikai-sandbox-helper is the program that runs first in every
// engine sandbox of taikai (engines/sandbox/helper): built beside the taikai
// binary (go build -o DIR ./cmd/...), it is used instead of the taikai
// binary itself, whose start is several times slower.
package main

import (
	"os"

	"github.com/taikai-dev/taikai/engines/sandbox/helper"
)

func main() {
	err := helper.Main()
	if err == nil {
		os.Stderr.WriteString("taikai-sandbox-helper runs only inside taikai's engine sandboxes\n")
		os.Exit(2)
	}
	os.Stderr.WriteString("taikai sandbox: " + err.Error() + "\n")
	os.Exit(127)
}
