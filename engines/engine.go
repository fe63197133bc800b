// Package engines is everything about the programs that play: an engine's
// definition, its command line with placeholders, the registry of the wire
// protocols they speak, the Seat through which the referee talks to one, and
// the launcher that starts it, hands its adapter a stream (a TCP connection
// or its stdin and stdout), captures its output and kills it afterwards.
package engines

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/taikai-dev/taikai/games"
)

// Engine is a registered program that plays one game over one protocol.
type Engine struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Game     string   `json:"game"`
	Protocol string   `json:"protocol"`
	Command  []string `json:"command"`           // argv with placeholders; empty for a built-in
	Dir      string   `json:"dir,omitempty"`     // working directory
	Port     int      `json:"port,omitempty"`    // fixed port the engine always dials; 0: one port per seat
	Builtin  string   `json:"builtin,omitempty"` // name of a built-in engine
	// MemoryMB bounds the memory of the engine's sandbox (all its processes)
	// in MiB; 0: the default, 1024.
	MemoryMB int `json:"memory_mb,omitempty"`
	// MaxProcs bounds the processes and threads of the engine's sandbox; 0:
	// the default, 256. A fork over it fails inside the engine.
	MaxProcs int `json:"max_procs,omitempty"`
	// ConnectTimeoutMS is the time the engine has from its start to connect,
	// for one that builds an opening book first; 0: the tournament's
	// connect_timeout_ms, else its protocol's default.
	ConnectTimeoutMS int64 `json:"connect_timeout_ms,omitempty"`
}

// Limits of the per-engine sandbox settings.
const (
	MinMemoryMB = 16
	MaxMemoryMB = 64 << 10
	MinProcs    = 4
	MaxProcs    = 1 << 15
	// MaxConnectTimeoutMS is the longest an engine may take to connect.
	MaxConnectTimeoutMS = 600 * 1000
)

// Validate checks an engine definition and fills in the default protocol.
func (e *Engine) Validate() error {
	if strings.TrimSpace(e.Name) == "" {
		return games.Invalid("name", "must not be empty")
	}
	if len(e.Name) > 64 {
		return games.Invalid("name", "must be at most 64 bytes").With("too_long", map[string]any{"max": 64})
	}
	for _, r := range e.Name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) && r != ' ' {
			return games.Invalid("name", "must be printable, found %q", r)
		}
	}
	if _, ok := games.Lookup(e.Game); !ok {
		return games.Invalid("game", "%s", games.Unknown(e.Game))
	}
	ps := Protocols(e.Game)
	if len(ps) == 0 {
		return games.Invalid("game", "no protocol plays %s", e.Game)
	}
	if e.Protocol == "" {
		e.Protocol = ps[0]
	}
	if !slices.Contains(ps, e.Protocol) {
		if g := ProtocolGame(e.Protocol); g != "" {
			return games.Invalid("protocol", "protocol %q is for %s, not %s", e.Protocol, g, e.Game)
		}
		return games.Invalid("protocol", "unknown protocol %q, want one of %s", e.Protocol, strings.Join(ps, ", "))
	}
	if e.Port != 0 && (e.Port < 1024 || e.Port > 65535) {
		return games.OutOfRange("port", int64(e.Port), 1024, 65535, "")
	}
	if e.MemoryMB != 0 && (e.MemoryMB < MinMemoryMB || e.MemoryMB > MaxMemoryMB) {
		return games.OutOfRange("memory_mb", int64(e.MemoryMB), MinMemoryMB, MaxMemoryMB, " (0: the default, 1024)")
	}
	if e.MaxProcs != 0 && (e.MaxProcs < MinProcs || e.MaxProcs > MaxProcs) {
		return games.OutOfRange("max_procs", int64(e.MaxProcs), MinProcs, MaxProcs, " (0: the default, 256)")
	}
	if e.ConnectTimeoutMS < 0 || e.ConnectTimeoutMS > MaxConnectTimeoutMS {
		return games.OutOfRange("connect_timeout_ms", e.ConnectTimeoutMS, 0, MaxConnectTimeoutMS, " (0: the tournament's, else the protocol's)")
	}
	if e.Builtin != "" {
		if len(e.Command) > 0 {
			return games.Invalid("command", "give either command or builtin, not both")
		}
		b, ok := LookupBuiltin(e.Builtin)
		if !ok {
			return games.Invalid("builtin", "unknown built-in %q, want one of %s", e.Builtin, strings.Join(BuiltinNames(), ", "))
		}
		if b.Game != e.Game {
			return games.Invalid("builtin", "built-in %q plays %s, not %s", e.Builtin, b.Game, e.Game)
		}
		if !slices.Contains(b.Protocols, e.Protocol) {
			return games.Invalid("protocol", "built-in %q does not speak %s", e.Builtin, e.Protocol)
		}
		return nil
	}
	if len(e.Command) == 0 || strings.TrimSpace(e.Command[0]) == "" {
		return games.Invalid("command", "must not be empty")
	}
	if err := checkPlaceholders(e.Command); err != nil {
		return games.Invalid("command", "%s", err.Error())
	}
	return nil
}

// Placeholders are the names a command may use in braces (PROTOCOLS.md, "Engine
// launch contract"), plus the game options an engine may want to know.
var Placeholders = []string{"host", "port", "color", "colorflag", "colornum", "name", "time_ms", "game_id", "rule", "size"}

func checkPlaceholders(argv []string) error {
	for i, a := range argv {
		var bad string
		closed := placeholders(a, func(string) {}, func(name string) {
			if bad == "" && !slices.Contains(Placeholders, name) {
				bad = name
			}
		})
		switch {
		case bad != "":
			return fmt.Errorf("argument %d %q: unknown placeholder {%s}, want one of {%s}", i, a, bad, strings.Join(Placeholders, "}, {"))
		case !closed:
			return fmt.Errorf("argument %d %q: unclosed {", i, a)
		}
	}
	return nil
}

// placeholders walks a in order, passing its text to lit and the name of each
// {name} to ph. It reports false at a '{' without its '}': the rest of a goes
// to lit.
func placeholders(a string, lit, ph func(string)) bool {
	for rest := a; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			lit(rest)
			return true
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			lit(rest)
			return false
		}
		lit(rest[:open])
		ph(rest[open+1 : open+end])
		rest = rest[open+end+1:]
	}
}

// Expand replaces the placeholders of argv with their values; one without a
// value stays as it is.
func Expand(argv []string, vars map[string]string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if !strings.Contains(a, "{") {
			out[i] = a
			continue
		}
		var sb strings.Builder
		placeholders(a, func(s string) { sb.WriteString(s) }, func(name string) {
			if v, ok := vars[name]; ok {
				sb.WriteString(v)
			} else {
				sb.WriteString("{" + name + "}")
			}
		})
		out[i] = sb.String()
	}
	return out
}

// SplitCommand splits a command line into arguments the way a POSIX shell would
// for words: blanks separate, single quotes keep everything, double quotes keep
// everything but \" \\ \$ \`, a backslash outside quotes escapes the next
// character. Nothing is expanded: the command is run without a shell.
// On Windows a backslash is a path's separator: it is kept as it is, except
// for \" in double quotes (C:\Engines\edax.exe and "C:\My Engines\edax.exe"
// are one argument each).
func SplitCommand(s string) ([]string, error) { return splitCommand(s, runtime.GOOS == "windows") }

func splitCommand(s string, windowsPaths bool) ([]string, error) {
	var (
		args  []string
		cur   strings.Builder
		inArg bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		case c == '\\' && windowsPaths:
			inArg = true
			cur.WriteByte(c)
		case c == '\\':
			inArg = true
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			}
		case c == '\'':
			inArg = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inArg = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || !windowsPaths && strings.IndexByte("\\$`", s[i+1]) >= 0) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		default:
			inArg = true
			cur.WriteByte(c)
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// QuoteCommand joins argv into one line that SplitCommand reads back.
func QuoteCommand(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		// A placeholder ({host}) is no shell syntax (brace expansion needs
		// a comma or ..): it stays as the user wrote it, unquoted.
		if a != "" && !strings.ContainsAny(placeholderWord.ReplaceAllString(a, ""), " \t\n\r'\"\\$`*?[]{}()<>|&;#~!") {
			parts[i] = a
			continue
		}
		parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(parts, " ")
}

// placeholderWord is a placeholder in a command's word, as QuoteCommand
// leaves it unquoted.
var placeholderWord = regexp.MustCompile(`\{[a-z_]+\}`)

// ParseSpec reads a cutechess-style engine spec in one argument:
// `name=seed cmd='java OthelloClient.java {host}' dir=../shared/clients port=46000 protocol=othello-board`.
// A spec that is a single word naming a built-in engine gives that built-in.
// The game must be given; the protocol defaults to the game's first.
func ParseSpec(spec, game string) (Engine, error) {
	if b, ok := LookupBuiltin(spec); ok {
		e := Engine{Name: spec, Game: b.Game, Protocol: b.Protocols[0], Builtin: spec}
		if game != "" && game != b.Game {
			return e, games.Invalid("engine", "built-in %q plays %s, not %s", spec, b.Game, game)
		}
		return e, nil
	}
	words, err := SplitCommand(spec)
	if err != nil {
		return Engine{}, games.Invalid("engine", "spec %q: %v", spec, err)
	}
	e := Engine{Game: game}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return e, games.Invalid("engine", "spec %q: %q is not key=value (keys: name, cmd, dir, port, protocol, builtin, memory_mb, max_procs, connect); a single word must be a built-in (%s)", spec, w, strings.Join(BuiltinNames(), ", "))
		}
		switch k {
		case "name":
			e.Name = v
		case "cmd":
			argv, err := SplitCommand(v)
			if err != nil {
				return e, games.Invalid("cmd", "spec %q: %v", spec, err)
			}
			e.Command = argv
		case "dir":
			e.Dir = v
		case "port":
			p, err := strconv.Atoi(v)
			if err != nil {
				return e, games.Invalid("port", "spec %q: port %q is not a number", spec, v)
			}
			e.Port = p
		case "protocol", "proto":
			e.Protocol = v
		case "memory_mb", "max_procs":
			n, err := strconv.Atoi(v)
			if err != nil {
				return e, games.Invalid(k, "spec %q: %s %q is not a number", spec, k, v)
			}
			if k == "memory_mb" {
				e.MemoryMB = n
			} else {
				e.MaxProcs = n
			}
		case "builtin":
			e.Builtin = v
		case "connect":
			d, err := time.ParseDuration(v)
			if err != nil {
				return e, games.Invalid("connect", "spec %q: connect %q is not a duration (30s, 2m)", spec, v)
			}
			e.ConnectTimeoutMS = d.Milliseconds()
		default:
			return e, games.Invalid("engine", "spec %q: unknown key %q (keys: name, cmd, dir, port, protocol, builtin, memory_mb, max_procs, connect)", spec, k)
		}
	}
	if e.Name == "" {
		switch {
		case e.Builtin != "":
			e.Name = e.Builtin
		case len(e.Command) > 0:
			e.Name = e.Command[0]
		}
	}
	if e.Game == "" && e.Protocol != "" {
		e.Game = ProtocolGame(e.Protocol)
	}
	if e.Game == "" && e.Builtin != "" {
		if b, ok := LookupBuiltin(e.Builtin); ok {
			e.Game = b.Game
		}
	}
	return e, e.Validate()
}
