package engines

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines/sandbox"
)

// Prepared sandboxes: most of a sandbox's start (bwrap's namespaces and
// mounts, the cgroups, the seat's listener; about 10 ms here) does not
// depend on the game, only on the engine. With Launcher.Prepare, each
// sandboxed start of an engine has a sandbox for that engine's next start
// made (sandbox.Prepare): at once in the background beside other games, else
// when the engine is stopped (see startSandboxed). The next game of the
// engine then waits only for the exec of its command.
const (
	// preparedIdle is how long a prepared sandbox waits for its game before
	// it is stopped (a tournament that ended leaves nothing running long).
	preparedIdle = 30 * time.Second
	// preparedPerEngine bounds the prepared sandboxes kept per engine
	// configuration (both seats of a self-play game, several games at once).
	preparedPerEngine = 4
)

// sandboxPool holds prepared sandboxes by the configuration they were made
// for.
type sandboxPool struct {
	mu       sync.Mutex
	ready    map[string][]*sandbox.Sandbox
	idle     map[*sandbox.Sandbox]*time.Timer // stops a ready one unused for preparedIdle
	making   map[string]int
	closed   bool
	inflight pending
}

// poolKey identifies the sandboxes interchangeable for cfg: everything
// bwrap and the cgroups are set up with, and whether the engine's standard
// input and output are pipes to the server (stdio).
func poolKey(cfg sandbox.Config, stdio bool) string {
	return fmt.Sprintf("%q|%q|%d|%d|%d|%d|%q|%q|%q|%d/%d|%v", cfg.EngineDir, cfg.FolderDir, cfg.MemoryBytes, cfg.Pids,
		cfg.NoFile, cfg.Port, cfg.Helper, cfg.ReadOnly, cfg.Hide, cfg.UID, cfg.GID, stdio)
}

// preparedConfig is cfg without what the game decides (the environment
// goes with Exec), named after the engine.
func preparedConfig(cfg sandbox.Config, e Engine) sandbox.Config {
	cfg.Env, cfg.Name = nil, cgroupName.ReplaceAllString(e.Name, "")
	return cfg
}

// take returns a prepared sandbox for key, or nil.
func (p *sandboxPool) take(key string) *sandbox.Sandbox {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.ready[key]) > 0 {
		sbs := p.ready[key]
		sb := sbs[len(sbs)-1]
		p.ready[key] = sbs[:len(sbs)-1]
		p.idle[sb].Stop()
		delete(p.idle, sb)
		select {
		case <-sb.Done(): // died waiting (stopped when idle)
		default:
			return sb
		}
	}
	return nil
}

// refill prepares one more sandbox for key in the background, unless
// enough are ready or on their way. The channel is closed when it is ready
// (or failed), at once if none is prepared.
func (p *sandboxPool) refill(cfg sandbox.Config, stdio bool, log func(error)) <-chan struct{} {
	key := poolKey(cfg, stdio)
	p.mu.Lock()
	defer p.mu.Unlock()
	done := make(chan struct{})
	if p.closed || len(p.ready[key])+p.making[key] >= preparedPerEngine {
		close(done)
		return done
	}
	if p.ready == nil {
		p.ready, p.making, p.idle = map[string][]*sandbox.Sandbox{}, map[string]int{}, map[*sandbox.Sandbox]*time.Timer{}
	}
	p.making[key]++
	p.inflight.add(1)
	go func() {
		defer close(done)
		defer p.inflight.add(-1)
		sb, err := sandbox.Prepare(cfg, stdio)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.making[key]--
		if err != nil {
			log(err)
			return
		}
		if p.closed {
			go sb.Stop(0)
			return
		}
		p.ready[key] = append(p.ready[key], sb)
		p.idle[sb] = time.AfterFunc(preparedIdle, func() {
			if p.remove(key, sb) {
				sb.Stop(0)
			}
		})
	}()
	return done
}

// remove takes sb out of the pool, reporting whether it was there (not
// taken by a game).
func (p *sandboxPool) remove(key string, sb *sandbox.Sandbox) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	sbs := p.ready[key]
	for i, s := range sbs {
		if s == sb {
			p.ready[key] = append(sbs[:i:i], sbs[i+1:]...)
			delete(p.idle, sb)
			return true
		}
	}
	return false
}

// close stops every prepared sandbox and waits for those being made (until
// ctx is done; they stop themselves when made).
func (p *sandboxPool) close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	var all []*sandbox.Sandbox
	for _, sbs := range p.ready {
		all = append(all, sbs...)
	}
	for _, t := range p.idle {
		t.Stop()
	}
	p.ready, p.idle = nil, nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sb := range all {
		wg.Go(func() {
			sb.Stop(0)
			<-sb.Done()
		})
	}
	wg.Wait()
	_ = p.inflight.wait(ctx)
}

// execable tells whether a prepared sandbox can take la's command (see
// sandbox.Execable).
func (l *Launcher) execable(la Launch, argv, env []string) bool {
	if err := sandbox.Execable(argv, env); err != nil {
		l.logger().Debug("not in a prepared sandbox", "engine", la.Engine.Name, "err", err)
		return false
	}
	return true
}

// startPrepared starts la's engine (argv and cfg.Env Execable) in a
// prepared sandbox for cfg, if the pool has one: ok is false if it has none
// or the one it had is unusable (the caller then starts a sandbox as usual).
func (l *Launcher) startPrepared(ctx context.Context, la Launch, cfg sandbox.Config, stdio bool, argv []string, out *cappedWriter,
	folder string, deadline time.Time, timeout time.Duration) (*Process, Stream, error, bool) {
	sb := l.pool.take(poolKey(preparedConfig(cfg, la.Engine), stdio))
	if sb == nil {
		return nil, nil, nil, false
	}
	fmt.Fprintf(out, "[taikai] %s: sandboxed, prepared ahead (memory %d MiB, %d processes): %s\n", time.Now().UTC().Format(time.RFC3339Nano),
		cfg.MemoryBytes>>20, max(cfg.Pids, sandbox.DefaultPids), QuoteCommand(argv))
	st, err := sb.Exec(argv, cfg.Env)
	if err != nil {
		sb.Stop(0)
		l.logger().Warn("a prepared sandbox was unusable; starting another", "engine", la.Engine.Name, "err", err)
		return nil, nil, nil, false
	}
	copied := make(chan struct{})
	go func() {
		// Ends at end of file: once every process of the sandbox is gone.
		_, _ = io.Copy(out, st.Log)
		st.Log.Close()
		close(copied)
	}()
	proc := &Process{sb: sb, done: make(chan struct{}), out: out, folder: folder}
	go func() {
		proc.err = sb.Wait()
		<-copied
		close(proc.done)
	}()
	proc2, stream, err := l.connectSandboxed(ctx, la, proc, st.Stdin, st.Stdout, deadline, timeout)
	return proc2, stream, err, true
}
