package main

import (
	"fmt"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
)

// sandboxModes are the values of serve's --sandbox.
var sandboxModes = []string{"auto", "on", "off"}

// setupSandbox makes l run every engine in engines/sandbox, or says why this
// host cannot (sandbox.Available's message, which says how to fix it). It
// tries a sandbox as the engines will have it, with the seat's listener: one
// the server opens by entering the sandbox's network namespace if it may
// (root on a host), else one the taikai binary opens inside (containers).
// enginesDir, if set, is the directory of uploaded engines' directories:
// the engines' uid must be able to reach it.
func setupSandbox(l *engines.Launcher, enginesDir string) error {
	l.Sandbox = true
	if err := platformSandbox(); err != nil {
		return err
	}
	if err := sandbox.Available(); err != nil {
		return err
	}
	cfg, err := l.SandboxConfig(engines.Engine{})
	if err != nil {
		return err
	}
	cfg.Port = engines.SandboxPort
	cfg.Helper = ""
	if enginesDir != "" {
		// The check fails with the directory to chmod if the engines' uid
		// cannot reach it (DATA/engines/NAME is an upload's directory).
		cfg.EngineDir = enginesDir
	}
	// Sandboxes are made ahead of their games (engines/prepared.go); the
	// launcher's owner calls Close.
	l.Prepare = true
	errNS := sandbox.Check(cfg)
	if errNS == nil {
		l.SandboxHelper = false
		return nil
	}
	cfg.Helper = cfg.ReadOnly[0] // the taikai binary
	if err := sandbox.Check(cfg); err != nil {
		l.Prepare = false
		return fmt.Errorf("sandbox: no way to open an engine's seat inside its sandbox: entering its network namespace: %v; with the taikai binary as helper: %v", errNS, err)
	}
	l.SandboxHelper = true
	return nil
}
