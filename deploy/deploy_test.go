// Package deploy_test checks the deployment files (Dockerfile, .dockerignore,
// docker-compose.yml, deploy/taikai.env.example) without a Docker engine: it
// parses them, checks them against each other and against the repository, and
// builds the binary the way the Dockerfile does.
package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The contract between the files, as DESIGN.md and the Dockerfile state it.
const (
	serviceName = "taikai"
	volumeName  = "taikai-data"
	dataDir     = "/data"
	binaryPath  = "/usr/local/bin/taikai"
	tiniPath    = "/usr/bin/tini"
	envExample  = "deploy/taikai.env.example"
)

// ---------------------------------------------------------------- repository

// root is the repository root (the directory holding go.mod).
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return dir
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ---------------------------------------------------------------- Dockerfile

// instr is one Dockerfile instruction with its continuation lines joined.
type instr struct {
	line int    // 1-based line of the instruction's first line
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string // the rest, continuations joined with spaces
}

// stage is a FROM and the instructions up to the next FROM.
type stage struct {
	image, name string
	instrs      []instr
}

func (s *stage) all(cmd string) []instr {
	var out []instr
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

func (s *stage) last(cmd string) (instr, bool) {
	all := s.all(cmd)
	if len(all) == 0 {
		return instr{}, false
	}
	return all[len(all)-1], true
}

// parseDockerfile splits a Dockerfile into instructions: a line ending in a
// backslash continues on the next; comment lines (also inside a continuation)
// and blank lines are dropped, as Docker does.
func parseDockerfile(src string) ([]instr, error) {
	var out []instr
	var cur *instr
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cont := strings.HasSuffix(line, `\`)
		line = strings.TrimSpace(strings.TrimSuffix(line, `\`))
		if cur == nil {
			cmd, rest, _ := strings.Cut(line, " ")
			cur = &instr{line: n, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(rest)}
		} else if line != "" {
			cur.args = strings.TrimSpace(cur.args + " " + line)
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: continuation at end of file", cur.line)
	}
	return out, sc.Err()
}

func stages(instrs []instr) ([]*stage, error) {
	var out []*stage
	for _, in := range instrs {
		if in.cmd == "FROM" {
			w := strings.Fields(in.args)
			w = slices.DeleteFunc(w, func(s string) bool { return strings.HasPrefix(s, "--") })
			if len(w) == 0 {
				return nil, fmt.Errorf("line %d: FROM without an image", in.line)
			}
			s := &stage{image: w[0]}
			if len(w) == 3 && strings.EqualFold(w[1], "AS") {
				s.name = w[2]
			} else if len(w) != 1 {
				return nil, fmt.Errorf("line %d: cannot read FROM %s", in.line, in.args)
			}
			out = append(out, s)
			continue
		}
		if len(out) == 0 {
			if in.cmd == "ARG" {
				continue
			}
			return nil, fmt.Errorf("line %d: %s before the first FROM", in.line, in.cmd)
		}
		out[len(out)-1].instrs = append(out[len(out)-1].instrs, in)
	}
	return out, nil
}

type dockerfile struct {
	build, runtime *stage
	env            map[string]string // the runtime stage's ENV
}

func loadDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	instrs, err := parseDockerfile(readFile(t, "Dockerfile"))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	st, err := stages(instrs)
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	if len(st) != 2 {
		t.Fatalf("Dockerfile: want 2 stages (build, runtime), got %d", len(st))
	}
	d := &dockerfile{build: st[0], runtime: st[1], env: map[string]string{}}
	if d.build.name != "build" {
		t.Fatalf("Dockerfile: first stage is %q, want `FROM ... AS build`", d.build.name)
	}
	for _, in := range d.runtime.all("ENV") {
		kv, err := parseEnv(in.args)
		if err != nil {
			t.Fatalf("Dockerfile line %d: %v", in.line, err)
		}
		for k, v := range kv {
			d.env[k] = v
		}
	}
	return d
}

// parseEnv reads `ENV k=v k2="v 2"` and the legacy `ENV k v`.
func parseEnv(args string) (map[string]string, error) {
	words, err := shellWords(args)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(words) > 0 && !strings.Contains(words[0], "=") {
		if len(words) < 2 {
			return nil, fmt.Errorf("ENV %s: no value", args)
		}
		out[words[0]] = strings.Join(words[1:], " ")
		return out, nil
	}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return nil, fmt.Errorf("ENV %s: %q is not key=value", args, w)
		}
		out[k] = v
	}
	return out, nil
}

// shellWords splits a command line as sh would for the simple commands a
// Dockerfile uses: quotes, backslashes, and words separated by blanks. The
// operators && || ; | count as words when they stand alone or end a word.
func shellWords(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	in := false // inside a word
	flush := func() {
		if in {
			w := b.String()
			for _, op := range []string{"&&", "||", ";", "|"} {
				if w != op && strings.HasSuffix(w, op) {
					words = append(words, strings.TrimSuffix(w, op), op)
					b.Reset()
					in = false
					return
				}
			}
			words = append(words, w)
		}
		b.Reset()
		in = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			in = true
		default:
			b.WriteByte(c)
			in = true
		}
	}
	flush()
	return words, nil
}

// commands splits shell words into simple commands at && || ; |.
func commands(words []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range words {
		switch w {
		case "&&", "||", ";", "|":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
		default:
			cur = append(cur, w)
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

var assignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// splitAssign separates leading VAR=value words from a simple command.
func splitAssign(cmd []string) (env map[string]string, argv []string) {
	env = map[string]string{}
	for len(cmd) > 0 && assignRE.MatchString(cmd[0]) {
		k, v, _ := strings.Cut(cmd[0], "=")
		env[k] = v
		cmd = cmd[1:]
	}
	return env, cmd
}

// jsonArray reads the exec form ["a", "b"]; ok is false for the shell form.
func jsonArray(s string) ([]string, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, false
	}
	return out, true
}

// copySpec is a COPY or ADD: its flags, sources and destination.
type copySpec struct {
	from      string
	srcs      []string
	dest      string
	line      int
	isJSONArr bool
}

func parseCopy(in instr) (copySpec, error) {
	c := copySpec{line: in.line}
	rest := strings.TrimSpace(in.args)
	for strings.HasPrefix(rest, "--") {
		flag, r, _ := strings.Cut(rest, " ")
		if v, ok := strings.CutPrefix(flag, "--from="); ok {
			c.from = v
		}
		rest = strings.TrimSpace(r)
	}
	words, ok := jsonArray(rest)
	c.isJSONArr = ok
	if !ok {
		var err error
		if words, err = shellWords(rest); err != nil {
			return c, err
		}
	}
	if len(words) < 2 {
		return c, fmt.Errorf("line %d: %s %s: want sources and a destination", in.line, in.cmd, in.args)
	}
	c.srcs, c.dest = words[:len(words)-1], words[len(words)-1]
	return c, nil
}

// goBuild is the `go build` that makes the binary, read from the build stage.
type goBuild struct {
	env  map[string]string
	args []string // after "go build"
	out  string   // the -o value
}

func findGoBuilds(t *testing.T, s *stage) (main goBuild, others []goBuild) {
	t.Helper()
	found := false
	for _, in := range s.all("RUN") {
		words, err := shellWords(in.args)
		if err != nil {
			t.Fatalf("Dockerfile line %d: %v", in.line, err)
		}
		for _, c := range commands(words) {
			env, argv := splitAssign(c)
			if len(argv) < 2 || argv[0] != "go" || argv[1] != "build" {
				continue
			}
			gb := goBuild{env: env, args: argv[2:]}
			for i, a := range gb.args {
				if a == "-o" && i+1 < len(gb.args) {
					gb.out = gb.args[i+1]
				} else if v, ok := strings.CutPrefix(a, "-o="); ok {
					gb.out = v
				}
			}
			if slices.Contains(gb.args, "./cmd/taikai") {
				if found {
					t.Fatalf("Dockerfile line %d: a second go build of ./cmd/taikai", in.line)
				}
				main, found = gb, true
			} else {
				others = append(others, gb)
			}
		}
	}
	if !found {
		t.Fatal("Dockerfile: the build stage has no RUN ... go build ... ./cmd/taikai")
	}
	return main, others
}

// flagValue returns the value of a go build flag given as -f v or -f=v.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// aptPackages lists what a stage's RUN lines install with apt-get, and whether
// every install uses --no-install-recommends and the lists are removed.
func aptPackages(t *testing.T, s *stage) (pkgs []string, noRecommends, cleaned bool) {
	t.Helper()
	noRecommends = true
	installs := 0
	for _, in := range s.all("RUN") {
		words, err := shellWords(in.args)
		if err != nil {
			t.Fatalf("Dockerfile line %d: %v", in.line, err)
		}
		for _, c := range commands(words) {
			_, argv := splitAssign(c)
			if len(argv) >= 3 && argv[0] == "rm" && slices.ContainsFunc(argv, func(a string) bool {
				return strings.HasPrefix(a, "/var/lib/apt/lists")
			}) {
				cleaned = true
			}
			if len(argv) < 2 || (argv[0] != "apt-get" && argv[0] != "apt") {
				continue
			}
			i := slices.Index(argv, "install")
			if i < 0 {
				continue
			}
			installs++
			if !slices.Contains(argv, "--no-install-recommends") {
				noRecommends = false
			}
			for _, a := range argv[i+1:] {
				if !strings.HasPrefix(a, "-") {
					pkgs = append(pkgs, a)
				}
			}
		}
	}
	return pkgs, noRecommends && installs > 0, cleaned
}

// ---------------------------------------------------------------- .dockerignore

type ignoreRule struct {
	re      *regexp.Regexp
	exclude bool // false for a !pattern
}

// loadDockerignore compiles .dockerignore the way Docker reads it: patterns
// relative to the context root (a leading / is dropped), * and ? within one
// path element, ** across elements, ! re-includes, the last match wins, and a
// path is excluded when it or one of its parent directories matches.
func loadDockerignore(t *testing.T) []ignoreRule {
	t.Helper()
	var rules []ignoreRule
	for _, line := range strings.Split(readFile(t, ".dockerignore"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{exclude: true}
		if p, ok := strings.CutPrefix(line, "!"); ok {
			r.exclude, line = false, strings.TrimSpace(p)
		}
		line = path.Clean(strings.TrimPrefix(filepath.ToSlash(line), "/"))
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		rules = append(rules, ignoreRule{re: regexp.MustCompile(re.String()), exclude: r.exclude})
	}
	return rules
}

// ignored reports whether the slash path rel (relative to the context root) is
// left out of the build context.
func ignored(rules []ignoreRule, rel string) bool {
	rel = path.Clean(rel)
	var cands []string
	for p := rel; p != "." && p != "/"; p = path.Dir(p) {
		cands = append(cands, p)
	}
	out := false
	for _, r := range rules {
		for _, c := range cands {
			if r.re.MatchString(c) {
				out = r.exclude
				break
			}
		}
	}
	return out
}

// ---------------------------------------------------------------- compose

type compose struct {
	Services map[string]map[string]any `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

func loadCompose(t *testing.T) (*compose, map[string]any) {
	t.Helper()
	var c compose
	if err := yaml.Unmarshal([]byte(readFile(t, "docker-compose.yml")), &c); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	svc, ok := c.Services[serviceName]
	if !ok {
		t.Fatalf("docker-compose.yml: no service %q (services: %v)", serviceName, keys(c.Services))
	}
	return &c, svc
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var interpRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}`)

// withDefaults interpolates ${VAR:-default} as compose would with VAR unset.
func withDefaults(s string) string {
	return interpRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := interpRE.FindStringSubmatch(m)
		if strings.HasSuffix(sub[2], "-") {
			return sub[3]
		}
		return ""
	})
}

// stringList reads a compose field that is a string or a list of strings (or
// of maps with a "path", as env_file allows).
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			switch e := e.(type) {
			case string:
				out = append(out, e)
			case map[string]any:
				if p, ok := e["path"].(string); ok {
					out = append(out, p)
				}
			}
		}
		return out
	}
	return nil
}

// environment reads `environment:` as a map or a list of KEY=value.
func environment(v any) map[string]string {
	out := map[string]string{}
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			out[k] = fmt.Sprint(e)
		}
	case []any:
		for _, e := range v {
			k, val, _ := strings.Cut(fmt.Sprint(e), "=")
			out[k] = val
		}
	}
	return out
}

// portMapping is one entry of `ports:`.
type portMapping struct{ host, container, proto string }

func parsePorts(t *testing.T, v any) []portMapping {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("docker-compose.yml: ports is %T, want a list", v)
	}
	var out []portMapping
	for _, e := range list {
		switch e := e.(type) {
		case string, int:
			s := withDefaults(fmt.Sprint(e))
			p := portMapping{proto: "tcp"}
			if base, proto, ok := strings.Cut(s, "/"); ok {
				s, p.proto = base, proto
			}
			parts := strings.Split(s, ":")
			p.container = parts[len(parts)-1]
			if len(parts) >= 2 {
				p.host = parts[len(parts)-2]
			}
			out = append(out, p)
		case map[string]any:
			p := portMapping{container: fmt.Sprint(e["target"]), proto: "tcp"}
			if h, ok := e["published"]; ok {
				p.host = withDefaults(fmt.Sprint(h))
			}
			if pr, ok := e["protocol"]; ok {
				p.proto = fmt.Sprint(pr)
			}
			out = append(out, p)
		default:
			t.Fatalf("docker-compose.yml: cannot read port %v", e)
		}
	}
	return out
}

// mount is one entry of a service's `volumes:`.
type mount struct{ source, target string }

func parseMounts(v any) []mount {
	list, _ := v.([]any)
	var out []mount
	for _, e := range list {
		switch e := e.(type) {
		case string:
			parts := strings.Split(e, ":")
			if len(parts) >= 2 {
				out = append(out, mount{parts[0], parts[1]})
			} else {
				out = append(out, mount{"", parts[0]})
			}
		case map[string]any:
			out = append(out, mount{fmt.Sprint(e["source"]), fmt.Sprint(e["target"])})
		}
	}
	return out
}

// healthcheck reads a test as an exec argv: compose ["CMD", ...] and
// Dockerfile HEALTHCHECK [options] CMD [...].
func composeHealth(t *testing.T, svc map[string]any) ([]string, map[string]any) {
	t.Helper()
	hc, ok := svc["healthcheck"].(map[string]any)
	if !ok {
		t.Fatal("docker-compose.yml: service has no healthcheck")
	}
	if d, _ := hc["disable"].(bool); d {
		t.Fatal("docker-compose.yml: healthcheck disabled")
	}
	list, ok := hc["test"].([]any)
	if !ok || len(list) < 2 {
		t.Fatalf("docker-compose.yml: healthcheck.test %v: want [\"CMD\", ...] (exec form, no shell)", hc["test"])
	}
	var argv []string
	for _, e := range list {
		argv = append(argv, fmt.Sprint(e))
	}
	if argv[0] != "CMD" {
		t.Fatalf("docker-compose.yml: healthcheck.test starts with %q, want CMD (exec form)", argv[0])
	}
	return argv[1:], hc
}

func dockerHealth(t *testing.T, d *dockerfile) []string {
	t.Helper()
	in, ok := d.runtime.last("HEALTHCHECK")
	if !ok {
		t.Fatal("Dockerfile: the runtime stage has no HEALTHCHECK")
	}
	rest := in.args
	for strings.HasPrefix(rest, "--") {
		_, r, _ := strings.Cut(rest, " ")
		rest = strings.TrimSpace(r)
	}
	cmd, rest, _ := strings.Cut(rest, " ")
	if cmd != "CMD" {
		t.Fatalf("Dockerfile line %d: HEALTHCHECK %s: want CMD", in.line, in.args)
	}
	argv, ok := jsonArray(rest)
	if !ok {
		t.Fatalf("Dockerfile line %d: HEALTHCHECK CMD %s: want the exec form [\"...\"] (no shell)", in.line, rest)
	}
	return argv
}

// healthURL finds the http URL a probe argv fetches.
func healthURL(t *testing.T, where string, argv []string) *url.URL {
	t.Helper()
	for _, a := range argv {
		if strings.HasPrefix(a, "http://") {
			u, err := url.Parse(a)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			return u
		}
	}
	t.Fatalf("%s: healthcheck %q fetches no http:// URL", where, argv)
	return nil
}

// ---------------------------------------------------------------- contract

// addrPort is the port of the image's TAIKAI_ADDR.
func addrPort(t *testing.T, d *dockerfile) string {
	t.Helper()
	addr, ok := d.env["TAIKAI_ADDR"]
	if !ok {
		t.Fatal("Dockerfile: runtime stage has no ENV TAIKAI_ADDR")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("Dockerfile: TAIKAI_ADDR=%s: %v", addr, err)
	}
	if host != "0.0.0.0" && host != "" {
		t.Errorf("Dockerfile: TAIKAI_ADDR=%s listens on %q only: a published port needs 0.0.0.0 inside the container", addr, host)
	}
	return port
}

func TestDockerfileStages(t *testing.T) {
	d := loadDockerfile(t)
	if !strings.HasPrefix(d.build.image, "golang:") {
		t.Errorf("Dockerfile: build stage FROM %s, want a golang image", d.build.image)
	}
	if !strings.HasPrefix(d.runtime.image, "debian:") {
		t.Errorf("Dockerfile: runtime stage FROM %s, want debian", d.runtime.image)
	}
	// The cgo binary needs the glibc it was linked against: same Debian release.
	_, btag, _ := strings.Cut(d.build.image, ":")
	_, rtag, _ := strings.Cut(d.runtime.image, ":")
	codename := func(tag string) string {
		for _, c := range []string{"bookworm", "trixie", "bullseye", "buster"} {
			if strings.Contains(tag, c) {
				return c
			}
		}
		return ""
	}
	if codename(btag) == "" || codename(btag) != codename(rtag) {
		t.Errorf("Dockerfile: build %s and runtime %s: want the same named Debian release (glibc)", d.build.image, d.runtime.image)
	}
	// The builder's Go must be at least go.mod's.
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindStringSubmatch(readFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod: no go directive")
	}
	if !strings.HasPrefix(btag, m[1]+"."+m[2]) {
		t.Errorf("Dockerfile: FROM %s, but go.mod says go %s.%s", d.build.image, m[1], m[2])
	}
}

func TestDockerfileCopySources(t *testing.T) {
	d := loadDockerfile(t)
	rules := loadDockerignore(t)
	dir := root(t)
	for _, s := range []*stage{d.build, d.runtime} {
		for _, in := range append(s.all("COPY"), s.all("ADD")...) {
			c, err := parseCopy(in)
			if err != nil {
				t.Fatal(err)
			}
			if c.from != "" {
				continue
			}
			for _, src := range c.srcs {
				if strings.Contains(src, "://") {
					t.Errorf("Dockerfile line %d: %s fetches %s; the context must hold everything", c.line, in.cmd, src)
					continue
				}
				matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(path.Clean(src))))
				if err != nil || len(matches) == 0 {
					t.Errorf("Dockerfile line %d: %s source %q: nothing in the repository matches", c.line, in.cmd, src)
					continue
				}
				for _, m := range matches {
					rel, _ := filepath.Rel(dir, m)
					if rel != "." && ignored(rules, filepath.ToSlash(rel)) {
						t.Errorf("Dockerfile line %d: %s source %q is excluded by .dockerignore", c.line, in.cmd, rel)
					}
				}
			}
		}
	}
	// go.mod and go.sum come first, alone, so that `go mod download` is a
	// layer of its own.
	copies := d.build.all("COPY")
	if len(copies) == 0 {
		t.Fatal("Dockerfile: build stage copies nothing")
	}
	first := copies[0]
	c, _ := parseCopy(first)
	if !slices.Equal(c.srcs, []string{"go.mod", "go.sum"}) {
		t.Errorf("Dockerfile line %d: first COPY %v, want go.mod go.sum (module download layer)", c.line, c.srcs)
	}
	download := false
	for _, in := range d.build.instrs {
		if in.cmd == "RUN" && strings.Contains(in.args, "go mod download") {
			download = true
		}
		if in.cmd == "COPY" && in.line > first.line {
			break
		}
	}
	if !download {
		t.Error("Dockerfile: no RUN go mod download between COPY go.mod go.sum and the source COPY")
	}
}

func TestDockerignore(t *testing.T) {
	rules := loadDockerignore(t)
	for _, p := range []string{".git", ".git/HEAD", "data", "data/taikai.db", "taikai.db", "x/y/taikai.db-wal",
		"taikai.db-shm", "taikai.env", "test-artifacts/out.txt", "deploy/deploy.test", "taikai"} {
		if !ignored(rules, p) {
			t.Errorf(".dockerignore: %s is sent to the build context", p)
		}
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/taikai/main.go", "migrations/0001_init.sql", "engines/testdata/clients"} {
		if ignored(rules, p) {
			t.Errorf(".dockerignore: %s is left out of the build context", p)
		}
	}
}

func TestDockerfileBuildStage(t *testing.T) {
	d := loadDockerfile(t)
	gb, others := findGoBuilds(t, d.build)
	if gb.env["CGO_ENABLED"] != "1" {
		t.Errorf("Dockerfile: go build of ./cmd/taikai without CGO_ENABLED=1 (github.com/mattn/go-sqlite3 needs cgo)")
	}
	if !slices.Contains(gb.args, "-trimpath") {
		t.Error("Dockerfile: go build without -trimpath")
	}
	if ld, _ := flagValue(gb.args, "-ldflags"); ld != "-s -w" {
		t.Errorf("Dockerfile: go build -ldflags %q, want \"-s -w\"", ld)
	}
	if gb.out == "" {
		t.Error("Dockerfile: go build of ./cmd/taikai without -o")
	}
	// A go build that warms the cache must use the same compile settings as
	// the real one, or the real one compiles everything again.
	for _, o := range others {
		if o.env["CGO_ENABLED"] != gb.env["CGO_ENABLED"] || slices.Contains(o.args, "-trimpath") != slices.Contains(gb.args, "-trimpath") {
			t.Errorf("Dockerfile: go build %v does not use the settings of the binary's build (CGO_ENABLED, -trimpath)", o.args)
		}
	}
	// The runtime stage takes exactly that file.
	var got []copySpec
	for _, in := range d.runtime.all("COPY") {
		c, err := parseCopy(in)
		if err != nil {
			t.Fatal(err)
		}
		if c.from != "" {
			got = append(got, c)
		}
	}
	if len(got) != 1 || got[0].from != "build" || !slices.Equal(got[0].srcs, []string{gb.out}) {
		t.Fatalf("Dockerfile: runtime stage COPY --from: %+v, want one COPY --from=build %s", got, gb.out)
	}
	if got[0].dest != binaryPath {
		t.Errorf("Dockerfile: binary copied to %s, want %s", got[0].dest, binaryPath)
	}
}

func TestDockerfileRuntime(t *testing.T) {
	d := loadDockerfile(t)
	pkgs, noRec, cleaned := aptPackages(t, d.runtime)
	if !noRec {
		t.Error("Dockerfile: apt-get install without --no-install-recommends")
	}
	if !cleaned {
		t.Error("Dockerfile: apt lists not removed (rm -rf /var/lib/apt/lists/*)")
	}
	// java: the JDK package, so that javac is there for multi-file engines
	// (and the source launcher of `java OthelloClient.java` in any case).
	if !slices.ContainsFunc(pkgs, func(p string) bool { return regexp.MustCompile(`^openjdk-\d+-jdk(-headless)?$`).MatchString(p) }) {
		t.Errorf("Dockerfile: runtime installs no openjdk-NN-jdk(-headless) (got %v)", pkgs)
	}
	for _, p := range []string{"ca-certificates", "python3", "ruby", "gcc", "g++", "make", "libc6-dev", "tini"} {
		if !slices.Contains(pkgs, p) {
			t.Errorf("Dockerfile: runtime does not install %s (got %v)", p, pkgs)
		}
	}

	// Non-root user, created in the image.
	user, ok := d.runtime.last("USER")
	if !ok {
		t.Fatal("Dockerfile: no USER: the server and its engines would run as root")
	}
	name, _, _ := strings.Cut(user.args, ":")
	if name == "root" || name == "0" {
		t.Errorf("Dockerfile line %d: USER %s is root", user.line, user.args)
	}
	if _, err := strconv.Atoi(name); err != nil && !strings.Contains(allRuns(d.runtime), "useradd") {
		t.Errorf("Dockerfile: USER %s but no RUN useradd creates it", name)
	}

	// The data volume: /data, owned by that user before VOLUME, and the ENV
	// paths inside it.
	vol, ok := d.runtime.last("VOLUME")
	if !ok {
		t.Fatal("Dockerfile: no VOLUME")
	}
	vols, isJSON := jsonArray(vol.args)
	if !isJSON {
		vols = strings.Fields(vol.args)
	}
	if !slices.Equal(vols, []string{dataDir}) {
		t.Errorf("Dockerfile: VOLUME %v, want %s", vols, dataDir)
	}
	owned := false
	for _, in := range d.runtime.all("RUN") {
		if in.line < vol.line && strings.Contains(in.args, dataDir) &&
			(strings.Contains(in.args, "chown") || strings.Contains(in.args, "-o "+name)) {
			owned = true
		}
	}
	if !owned {
		t.Errorf("Dockerfile: no RUN before VOLUME gives %s to %s: a new volume would be root's", dataDir, name)
	}
	if w, ok := d.runtime.last("WORKDIR"); !ok || w.args != dataDir {
		t.Errorf("Dockerfile: WORKDIR %q, want %s", w.args, dataDir)
	}
	if db := d.env["TAIKAI_DB"]; path.Dir(db) != dataDir {
		t.Errorf("Dockerfile: TAIKAI_DB=%s is not in %s", db, dataDir)
	}
	if data := d.env["TAIKAI_DATA"]; path.Clean(data) != dataDir {
		t.Errorf("Dockerfile: TAIKAI_DATA=%s, want %s", data, dataDir)
	}

	// Only the HTTP port.
	port := addrPort(t, d)
	var exposed []string
	for _, in := range d.runtime.all("EXPOSE") {
		for _, p := range strings.Fields(in.args) {
			exposed = append(exposed, strings.TrimSuffix(p, "/tcp"))
		}
	}
	if !slices.Equal(exposed, []string{port}) {
		t.Errorf("Dockerfile: EXPOSE %v, want only the HTTP port %s (engine ports stay inside)", exposed, port)
	}

	// Healthcheck: /healthz on that port, with a program the image has.
	argv := dockerHealth(t, d)
	u := healthURL(t, "Dockerfile", argv)
	if u.Path != "/healthz" || u.Port() != port {
		t.Errorf("Dockerfile: healthcheck fetches %s, want http://127.0.0.1:%s/healthz", u, port)
	}
	if prog := path.Base(argv[0]); !slices.Contains(pkgs, prog) && argv[0] != binaryPath {
		t.Errorf("Dockerfile: healthcheck runs %s, which the runtime stage does not install", argv[0])
	}

	// PID 1 is tini, which runs the binary the build stage made.
	ep, ok := d.runtime.last("ENTRYPOINT")
	if !ok {
		t.Fatal("Dockerfile: no ENTRYPOINT")
	}
	epv, ok := jsonArray(ep.args)
	if !ok {
		t.Fatalf("Dockerfile: ENTRYPOINT %s: want the exec form (a shell as PID 1 does not forward SIGTERM)", ep.args)
	}
	if !slices.Equal(epv, []string{tiniPath, "--", binaryPath}) {
		t.Errorf("Dockerfile: ENTRYPOINT %q, want [%q, \"--\", %q]", epv, tiniPath, binaryPath)
	}
	cmd, ok := d.runtime.last("CMD")
	if cv, isJSON := jsonArray(cmd.args); !ok || !isJSON || !slices.Equal(cv, []string{"serve"}) {
		t.Errorf("Dockerfile: CMD %s, want [\"serve\"]", cmd.args)
	}
}

func allRuns(s *stage) string {
	var b strings.Builder
	for _, in := range s.all("RUN") {
		b.WriteString(in.args)
		b.WriteString("\n")
	}
	return b.String()
}

func TestCompose(t *testing.T) {
	d := loadDockerfile(t)
	c, svc := loadCompose(t)

	// Built from the Dockerfile here.
	switch b := svc["build"].(type) {
	case string:
		if path.Clean(b) != "." {
			t.Errorf("docker-compose.yml: build %q, want .", b)
		}
	case map[string]any:
		if ctx, _ := b["context"].(string); path.Clean(ctx) != "." {
			t.Errorf("docker-compose.yml: build.context %q, want .", ctx)
		}
		if f, ok := b["dockerfile"].(string); ok && f != "Dockerfile" {
			t.Errorf("docker-compose.yml: build.dockerfile %q, want Dockerfile", f)
		}
	default:
		t.Errorf("docker-compose.yml: service has no build")
	}
	if img := svc["image"]; img != "taikai:latest" {
		t.Errorf("docker-compose.yml: image %v, want taikai:latest", img)
	}

	// One published port: the image's HTTP port, 8080 on the host by default.
	port := addrPort(t, d)
	ports := parsePorts(t, svc["ports"])
	if len(ports) != 1 {
		t.Fatalf("docker-compose.yml: %d published ports %v, want only the HTTP port (engine ports stay inside)", len(ports), ports)
	}
	if p := ports[0]; p.container != port || p.proto != "tcp" {
		t.Errorf("docker-compose.yml: publishes container port %s/%s, but TAIKAI_ADDR listens on %s/tcp", p.container, p.proto, port)
	}
	if ports[0].host != "8080" {
		t.Errorf("docker-compose.yml: host port %q by default, want 8080 (README: http://localhost:8080)", ports[0].host)
	}
	if nm, _ := svc["network_mode"].(string); nm == "host" {
		t.Error("docker-compose.yml: network_mode host would open the engines' ports on the host")
	}
	if _, ok := svc["expose"]; ok {
		t.Error("docker-compose.yml: expose: only the HTTP port, from the image")
	}

	// The named volume at /data, declared at the top level.
	var dataMount *mount
	for _, m := range parseMounts(svc["volumes"]) {
		if m.target == dataDir {
			dataMount = &m
		}
	}
	if dataMount == nil || dataMount.source != volumeName {
		t.Errorf("docker-compose.yml: want volume %s mounted at %s, got %+v", volumeName, dataDir, parseMounts(svc["volumes"]))
	}
	if _, ok := c.Volumes[volumeName]; !ok {
		t.Errorf("docker-compose.yml: volume %s not declared under top-level volumes:", volumeName)
	}
	if v, ok := c.Volumes[volumeName].(map[string]any); ok {
		if n, ok := v["name"]; ok && n != volumeName {
			t.Errorf("docker-compose.yml: volume %s is named %v; README.md (compose section) names it %s", volumeName, n, volumeName)
		}
		if ext, _ := v["external"].(bool); ext {
			t.Errorf("docker-compose.yml: volume %s is external: compose would not create it", volumeName)
		}
	}

	// Secrets from the env file, documented by the shipped example.
	files := stringList(svc["env_file"])
	if len(files) == 0 {
		t.Fatal("docker-compose.yml: no env_file (for TAIKAI_ADMIN_TOKEN)")
	}
	env := environment(svc["environment"])
	rules := loadDockerignore(t)
	for _, f := range files {
		ex := "deploy/" + path.Base(f) + ".example"
		if ex != envExample {
			t.Errorf("docker-compose.yml: env_file %s, but the shipped example is %s", f, envExample)
		}
		if !ignored(rules, path.Clean(f)) {
			t.Errorf(".dockerignore: env_file %s (a secret) is sent to the build context", f)
		}
	}
	exKeys := envFileKeys(t, readFile(t, envExample))
	if _, ok := exKeys["TAIKAI_ADMIN_TOKEN"]; !ok {
		t.Errorf("%s: no TAIKAI_ADMIN_TOKEN= line", envExample)
	}
	for k := range exKeys {
		if _, ok := env[k]; ok {
			t.Errorf("%s sets %s, but docker-compose.yml's environment: overrides it", envExample, k)
		}
		if _, ok := d.env[k]; ok && k != "TAIKAI_ADMIN_TOKEN" {
			t.Errorf("%s sets %s, which the image fixes (%s=%s)", envExample, k, k, d.env[k])
		}
	}

	// The demo switched by a variable, off by default.
	demo, ok := env["TAIKAI_DEMO"]
	if !ok {
		t.Error("docker-compose.yml: environment has no TAIKAI_DEMO")
	} else if m := regexp.MustCompile(`^\$\{TAIKAI_DEMO:?-([^}]*)\}$`).FindStringSubmatch(demo); m == nil {
		t.Errorf("docker-compose.yml: TAIKAI_DEMO: %s, want ${TAIKAI_DEMO:-0}", demo)
	} else if m[1] != "0" && m[1] != "false" && m[1] != "" {
		t.Errorf("docker-compose.yml: TAIKAI_DEMO defaults to %q, want off", m[1])
	}
	for k := range env {
		if _, ok := d.env[k]; ok {
			t.Errorf("docker-compose.yml: environment overrides %s, which the port, volume and healthcheck depend on", k)
		}
	}

	// Restart, limits, shutdown.
	if r := svc["restart"]; r != "unless-stopped" && r != "always" {
		t.Errorf("docker-compose.yml: restart %v, want unless-stopped", r)
	}
	limits, _ := dig(svc, "deploy", "resources", "limits").(map[string]any)
	if limits == nil {
		t.Error("docker-compose.yml: no deploy.resources.limits")
	} else {
		if cpus, err := strconv.ParseFloat(fmt.Sprint(limits["cpus"]), 64); err != nil || cpus <= 0 {
			t.Errorf("docker-compose.yml: deploy.resources.limits.cpus %v", limits["cpus"])
		}
		if m, _ := limits["memory"].(string); !regexp.MustCompile(`^\d+(\.\d+)?[bkmgBKMG]?$`).MatchString(m) {
			t.Errorf("docker-compose.yml: deploy.resources.limits.memory %v", limits["memory"])
		}
	}
	if n, ok := svc["pids_limit"].(int); !ok || n <= 0 {
		t.Errorf("docker-compose.yml: pids_limit %v, want a positive number (fork bombs)", svc["pids_limit"])
	} else if p, ok := limits["pids"]; ok && p != n {
		// Compose refuses a file whose two process limits differ.
		t.Errorf("docker-compose.yml: pids_limit %d but deploy.resources.limits.pids %v: Compose wants them equal", n, p)
	}
	if g, err := time.ParseDuration(fmt.Sprint(svc["stop_grace_period"])); err != nil || g <= 10*time.Second {
		t.Errorf("docker-compose.yml: stop_grace_period %v, want more than Docker's 10s", svc["stop_grace_period"])
	}
	if in, _ := svc["init"].(bool); in {
		t.Error("docker-compose.yml: init: true, but the image's ENTRYPOINT already runs tini")
	}

	// The same healthcheck as the image's.
	argv, hc := composeHealth(t, svc)
	if want := dockerHealth(t, d); !slices.Equal(argv, want) {
		t.Errorf("docker-compose.yml: healthcheck %q, the Dockerfile's is %q", argv, want)
	}
	if u := healthURL(t, "docker-compose.yml", argv); u.Path != "/healthz" || u.Port() != port {
		t.Errorf("docker-compose.yml: healthcheck fetches %s, want /healthz on %s", u, port)
	}
	for _, k := range []string{"interval", "timeout", "start_period"} {
		if v, ok := hc[k]; ok {
			if _, err := time.ParseDuration(fmt.Sprint(v)); err != nil {
				t.Errorf("docker-compose.yml: healthcheck.%s %v: %v", k, v, err)
			}
		}
	}
}

func dig(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// envFileKeys reads the KEY=value lines of an env file (comments skipped).
func envFileKeys(t *testing.T, src string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !assignRE.MatchString(k+"=") {
			t.Errorf("%s line %d: %q is not KEY=value", envExample, n+1, line)
			continue
		}
		out[k] = v
	}
	return out
}

// deployEnvNames lists the TAIKAI_* variables the deployment hands to the
// container: the image's ENV, compose's environment and the env file.
func deployEnvNames(t *testing.T) []string {
	t.Helper()
	d := loadDockerfile(t)
	_, svc := loadCompose(t)
	set := map[string]bool{}
	for k := range d.env {
		set[k] = true
	}
	for k := range environment(svc["environment"]) {
		set[k] = true
	}
	for k := range envFileKeys(t, readFile(t, envExample)) {
		set[k] = true
	}
	var out []string
	for k := range set {
		if strings.HasPrefix(k, "TAIKAI_") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestEnvNamesReadByCmd: every TAIKAI_* variable the deployment sets is one
// that cmd/taikai reads (by its literal name), so that a renamed flag or a typo
// cannot silently leave the container on a default.
func TestEnvNamesReadByCmd(t *testing.T) {
	names := deployEnvNames(t)
	for _, want := range []string{"TAIKAI_ADDR", "TAIKAI_DB", "TAIKAI_DATA", "TAIKAI_DEMO", "TAIKAI_ADMIN_TOKEN"} {
		if !slices.Contains(names, want) {
			t.Errorf("deployment files do not set %s", want)
		}
	}
	dir := filepath.Join(root(t), "cmd", "taikai")
	srcs, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("cmd/taikai: no Go sources (%v)", err)
	}
	var all bytes.Buffer
	for _, f := range srcs {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	var missing []string
	for _, n := range names {
		if !regexp.MustCompile(`\b` + n + `\b`).Match(all.Bytes()) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the deployment sets %s, but no Go source in cmd/taikai (non-test) names %s: "+
			"`taikai serve` must read each of them (env override of its flag, see DESIGN.md), "+
			"or the container runs on the flag defaults", strings.Join(missing, ", "), plural(missing))
	}
}

func plural(s []string) string {
	if len(s) == 1 {
		return "it"
	}
	return "them"
}

// ---------------------------------------------------------------- the binary

// TestBuildLikeDockerfile builds ./cmd/taikai with the Dockerfile's own go
// build command and checks the result can run in the runtime image.
func TestBuildLikeDockerfile(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("go is not on PATH")
		}
		t.Skip("go is not on PATH")
	}
	d := loadDockerfile(t)
	gb, _ := findGoBuilds(t, d.build)
	dir := root(t)
	bin := filepath.Join(t.TempDir(), "taikai")

	// The build context holds every file the build reads.
	checkContextComplete(t, dir)

	args := []string{"build"}
	for i := 0; i < len(gb.args); i++ {
		a := gb.args[i]
		switch {
		case a == "-o":
			args = append(args, "-o", bin)
			i++
		case strings.HasPrefix(a, "-o="):
			args = append(args, "-o="+bin)
		default:
			args = append(args, a)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range gb.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	t.Logf("%s go %s", envString(gb.env), strings.Join(args, " "))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build as in the Dockerfile: %v\n%s", err, out)
	}

	t.Run("help", func(t *testing.T) {
		out, code := runBin(t, bin, dir, nil, "help")
		if code != 0 || !strings.Contains(out, "serve") {
			t.Errorf("taikai help: exit %d\n%s", code, out)
		}
	})

	serveReady := serveImplemented(t, bin, dir)

	t.Run("serve flags", func(t *testing.T) {
		if !serveReady {
			t.Skip("`taikai serve` is not implemented yet: only `taikai help` is checked")
		}
		out, code := runBin(t, bin, dir, nil, "serve", "-h")
		if code != 0 {
			t.Errorf("taikai serve -h: exit %d\n%s", code, out)
		}
		for _, f := range []string{"addr", "db", "data", "demo"} {
			if !strings.Contains(out, "-"+f) {
				t.Errorf("taikai serve -h does not list --%s\n%s", f, out)
			}
		}
	})

	t.Run("libraries", func(t *testing.T) {
		checkLibraries(t, bin)
	})

	t.Run("serve as in the container", func(t *testing.T) {
		if !serveReady {
			t.Skip("`taikai serve` is not implemented yet")
		}
		serveLikeContainer(t, bin, d)
	})
}

func envString(env map[string]string) string {
	var parts []string
	for _, k := range keys(env) {
		parts = append(parts, k+"="+env[k])
	}
	return strings.Join(parts, " ")
}

// runBin runs the binary with a clean TAIKAI_* environment plus env.
func runBin(t *testing.T, bin, dir string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func cleanEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TAIKAI_") })
}

// serveImplemented tells a stub `serve` ("not yet") from the real one.
func serveImplemented(t *testing.T, bin, dir string) bool {
	t.Helper()
	out, code := runBin(t, bin, dir, nil, "serve", "-h")
	low := strings.ToLower(out)
	if code != 0 && (strings.Contains(low, "not yet") || strings.Contains(low, "not implemented")) {
		t.Logf("taikai serve is a stub (exit %d: %s)", code, strings.TrimSpace(out))
		return false
	}
	return true
}

// checkLibraries: the cgo binary needs only glibc's libraries, which
// debian:bookworm-slim has (package libc6).
func checkLibraries(t *testing.T, bin string) {
	t.Helper()
	if _, err := exec.LookPath("ldd"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ldd is not on PATH")
		}
		t.Skip("ldd is not on PATH")
	}
	out, err := exec.Command("ldd", bin).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "not a dynamic executable") {
			return // static: runs anywhere
		}
		t.Fatalf("ldd: %v\n%s", err, out)
	}
	allowed := regexp.MustCompile(`^(linux-vdso|linux-gate|libc|libm|libpthread|libdl|librt|libresolv|ld-linux[-.\w]*)\.so(\.\d+)*$`)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(line, "statically linked") {
			return
		}
		lib := path.Base(f[0])
		if !allowed.MatchString(lib) || strings.Contains(line, "not found") {
			t.Errorf("the binary links %s, which debian:bookworm-slim does not have: %s", lib, strings.TrimSpace(line))
		}
	}
}

// checkContextComplete: no file the build of ./cmd/taikai reads from this
// module (sources, cgo files, embedded files, go.mod, go.sum) is left out of
// the build context by .dockerignore.
func checkContextComplete(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=Dir,Module,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles", "./cmd/taikai")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	type pkg struct {
		Dir        string
		Module     *struct{ Main bool }
		GoFiles    []string
		CgoFiles   []string
		CFiles     []string
		CXXFiles   []string
		HFiles     []string
		SFiles     []string
		SysoFiles  []string
		EmbedFiles []string
	}
	rules := loadDockerignore(t)
	need := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		rel, err := filepath.Rel(dir, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, fs := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range fs {
				need = append(need, filepath.ToSlash(filepath.Join(rel, f)))
			}
		}
	}
	if len(need) < 3 {
		t.Fatal("go list found no package of this module")
	}
	for _, f := range need {
		if ignored(rules, f) {
			t.Errorf(".dockerignore leaves out %s, which the build of ./cmd/taikai reads", f)
		}
	}
}

// serveLikeContainer starts `taikai serve` the way the image does: the
// image's CMD, configured by environment variables only, in the data
// directory, and checks /healthz, the database path and a clean SIGTERM
// shutdown within compose's stop_grace_period.
func serveLikeContainer(t *testing.T, bin string, d *dockerfile) {
	data := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db := filepath.Join(data, path.Base(d.env["TAIKAI_DB"]))

	cmdIn, _ := d.runtime.last("CMD")
	args, _ := jsonArray(cmdIn.args)
	cmd := exec.Command(bin, args...)
	cmd.Dir = data
	cmd.Env = append(cleanEnv(),
		// The image listens on 0.0.0.0; a test stays on loopback.
		"TAIKAI_ADDR="+addr, "TAIKAI_DB="+db, "TAIKAI_DATA="+data,
		"TAIKAI_DEMO=0", "TAIKAI_ADMIN_TOKEN=deploy-test-token")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// An engine left behind must not keep Wait on the output pipe for ever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var werr error
	exited := make(chan struct{}) // closed once Wait has returned; werr set
	go func() { werr = cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("taikai serve output:\n%s", out.String())
		}
	}()

	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second) // the healthcheck's start_period
	for {
		resp, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case <-exited:
			t.Fatalf("taikai serve exited before /healthz answered: %v", werr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /healthz on TAIKAI_ADDR=%s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("TAIKAI_DB=%s: database not created: %v", db, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if code := cmd.ProcessState.ExitCode(); code < 0 {
			t.Errorf("taikai serve died of a signal on SIGTERM instead of shutting down: %v", cmd.ProcessState)
		}
	case <-time.After(30 * time.Second): // compose's stop_grace_period
		t.Error("taikai serve did not exit within 30s of SIGTERM (stop_grace_period); Docker would SIGKILL it")
	}
}

// ---------------------------------------------------------------- README

// composeSection cuts the deployment section out of the README: from its
// heading to the next heading of the same level.
func composeSection(t *testing.T, readme string) string {
	t.Helper()
	const heading = "## Deploy with docker compose"
	i := strings.Index(readme, heading)
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	rest := readme[i+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return heading + rest
}

// TestReadmeMatchesFiles: the commands in README.md's section "Deploy with
// docker compose" name the service, volume, image, paths, programs and
// variables the files define.
func TestReadmeMatchesFiles(t *testing.T) {
	d := loadDockerfile(t)
	_, svc := loadCompose(t)
	readme := composeSection(t, readFile(t, "README.md"))
	composeSrc := readFile(t, "docker-compose.yml")
	image, _ := svc["image"].(string)
	pkgs, _, _ := aptPackages(t, d.runtime)
	user, _ := d.runtime.last("USER")

	for _, want := range []string{
		"cp " + envExample + " " + stringList(svc["env_file"])[0],
		"docker compose up -d",
		"http://localhost:" + parsePorts(t, svc["ports"])[0].host,
		"`" + volumeName + "`",
		"FROM " + image,
		"USER " + user.args,
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md (compose section) does not say %q", want)
		}
	}

	// Commands in the shell blocks.
	inBlock := false
	baseTools := []string{"sh", "tar", "cat", "rm", "ls", "cp", "mv"}
	for n, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = strings.TrimPrefix(line, "```") == "sh"
			continue
		}
		if !inBlock || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		words, err := shellWords(line)
		if err != nil {
			t.Errorf("README.md (compose section) line %d: %v", n+1, err)
			continue
		}
		for _, c := range commands(words) {
			_, argv := splitAssign(c)
			at := fmt.Sprintf("README.md (compose section) line %d: %s", n+1, strings.Join(argv, " "))
			switch {
			case len(argv) >= 3 && argv[0] == "docker" && argv[1] == "compose":
				sub, rest := argv[2], nonFlags(argv[3:])
				switch sub {
				case "exec", "logs", "stop", "start", "restart":
					if len(rest) == 0 || rest[0] != serviceName {
						t.Errorf("%s: want service %s", at, serviceName)
					} else if sub == "exec" && len(rest) > 1 && !slices.Contains(pkgs, rest[1]) && !slices.Contains(baseTools, rest[1]) {
						t.Errorf("%s: %s is not installed in the image", at, rest[1])
					}
				case "cp":
					if len(rest) == 0 || !strings.HasPrefix(rest[0], serviceName+":") {
						t.Errorf("%s: want %s:PATH", at, serviceName)
					}
				}
			case len(argv) >= 2 && argv[0] == "docker" && argv[1] == "run":
				for i, a := range argv {
					if a == "-v" && i+1 < len(argv) && argv[i+1] != volumeName+":"+dataDir {
						t.Errorf("%s: mounts %s, want %s:%s", at, argv[i+1], volumeName, dataDir)
					}
				}
				if !slices.Contains(argv, image) {
					t.Errorf("%s: want image %s", at, image)
				}
			}
		}
	}

	// Paths in /data and the database's name.
	for _, p := range regexp.MustCompile("/data/[A-Za-z0-9_.-]+").FindAllString(readme, -1) {
		if strings.HasPrefix(p, "/data/taikai.db") && !strings.HasPrefix(p, d.env["TAIKAI_DB"]) {
			t.Errorf("README.md (compose section): %s, but TAIKAI_DB=%s", p, d.env["TAIKAI_DB"])
		}
	}

	// Every TAIKAI_* variable it names is one the deployment uses: a
	// container variable or one compose interpolates.
	known := deployEnvNames(t)
	for _, m := range interpRE.FindAllStringSubmatch(composeSrc, -1) {
		known = append(known, m[1])
	}
	for _, v := range regexp.MustCompile(`\bTAIKAI_[A-Z_]+\b`).FindAllString(readme, -1) {
		if !slices.Contains(known, v) {
			t.Errorf("README.md (compose section) names %s, which the deployment files do not use", v)
		}
	}
}

func nonFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}
