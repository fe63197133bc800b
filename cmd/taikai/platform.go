package main

import (
	"fmt"
	"runtime"
)

// platformSandbox says why engines cannot be sandboxed on this operating
// system: engines/sandbox is Linux only (bubblewrap, namespaces, cgroups).
func platformSandbox() error {
	name, ok := map[string]string{"linux": "", "darwin": "macOS", "windows": "Windows"}[runtime.GOOS]
	if name == "" && ok {
		return nil
	}
	if !ok {
		name = runtime.GOOS
	}
	return fmt.Errorf("sandbox: engines can be sandboxed on Linux only, not on %s: to run uploaded engines, start taikai's Docker deployment (docker compose up -d: docs/DEPLOY.md, Platforms), or start taikai with --sandbox=off to run engines unsandboxed (only programs you trust)", name)
}
