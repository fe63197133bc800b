package main

import (
	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
)

// sandboxModes are the values of serve's --sandbox.
var sandboxModes = []string{"auto", "on", "off"}

// setupSandbox makes l run every engine in engines/sandbox, or says why this
// host cannot (sandbox.Check's message, which says how to fix it). It
// tries a sandbox as the engines will have it, with the seat's listener.
// enginesDir, if set, is the directory of uploaded engines' directories:
// the engines' uid must be able to reach it.
func setupSandbox(l *engines.Launcher, enginesDir string) error {
	l.Sandbox = true
	if err := platformSandbox(); err != nil {
		return err
	}
	cfg, err := l.SandboxConfig(engines.Engine{})
	if err != nil {
		return err
	}
	cfg.Port = engines.SandboxPort
	if enginesDir != "" {
		// The check fails if the engines' uid cannot read it
		// (DATA/engines/NAME is an upload's directory).
		cfg.EngineDir = enginesDir
	}
	return sandbox.Check(cfg)
}
