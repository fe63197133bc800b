//go:build docker

package deploy_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestComposeVolumesPerProject (issue 37, item 17): two compose projects on
// one host get volumes of their own, named after the project, unless
// TAIKAI_VOLUME fixes the name. It reads `docker compose config`: no
// Docker engine needed, only the compose CLI (hence the docker tag: CI
// installs Compose for this package's step, .ci/run).
func TestComposeVolumesPerProject(t *testing.T) {
	if err := exec.Command("docker", "compose", "version").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("docker compose is missing, and CI=true: %v", err)
		}
		t.Skip("no docker compose")
	}
	env := os.Environ()
	env = append(env, "TAIKAI_ENV_FILE=deploy/taikai.env.example")
	full := func(extra []string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "docker", append([]string{"compose", "-f", "../docker-compose.yml", "--project-directory", ".."}, append(args, "config")...)...)
		var clean []string
		for _, kv := range env {
			if !strings.HasPrefix(kv, "TAIKAI_VOLUME=") && !strings.HasPrefix(kv, "COMPOSE_PROJECT_NAME=") {
				clean = append(clean, kv)
			}
		}
		cmd.Env = append(clean, extra...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("docker compose %v config: %v: %s", args, err, stderr.String())
		}
		return out.String()
	}
	class1, class2 := full(nil, "-p", "class1"), full(nil, "-p", "class2")
	for _, c := range []struct{ config, want string }{
		{class1, "name: class1-data"}, {class2, "name: class2-data"},
		{full([]string{"TAIKAI_VOLUME=taikai-data"}, "-p", "class2"), "name: taikai-data"},
	} {
		if !strings.Contains(c.config, c.want) {
			t.Errorf("the config lacks %q:\n%s", c.want, c.config)
		}
	}
}
