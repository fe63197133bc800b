// Command rogue is a NATS client on the compose network that tries to bend
// a game it does not play (deploy/compose_test.go, issue 36): it connects
// without credentials, with the shared token, with the join token and with a
// revoked worker's credentials, and, with credentials of its own, tries to
// hand in a result for the game another worker plays, claim that game, ack
// or hand back that worker's queue message, queue a game, purge the logs,
// and read, put over, delete or purge that worker's engine logs (its bucket
// taikai-logs-<name>); it puts logs in its own bucket. Each attempt's
// outcome is one JSON line on stdout.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/taikai-dev/taikai/tournament/cluster"
)

type outcome struct {
	Attack  string `json:"attack"`
	Outcome string `json:"outcome"` // refused, connected, violation, allowed, answer:<the server's answer>, error:<...>
}

func say(attack, result string) {
	json.NewEncoder(os.Stdout).Encode(outcome{attack, result})
}

func main() {
	url := flag.String("nats", "nats://taikai:4222", "NATS URL")
	game := flag.Int64("game", 0, "the game another worker plays")
	holder := flag.String("holder", "", "that worker's name")
	flag.Parse()
	dial := func(attack string, opts ...nats.Option) {
		nc, err := nats.Connect(*url, append(opts, nats.Timeout(10*time.Second), nats.NoReconnect())...)
		if err != nil {
			say(attack, "refused")
			return
		}
		nc.Close()
		say(attack, "connected")
	}
	dial("anonymous")
	dial("shared token", nats.Token(os.Getenv("ROGUE_TOKEN")))
	dial("join token", nats.Token(os.Getenv("ROGUE_JOIN")))
	dial("revoked credentials", cluster.WorkerAuth(os.Getenv("ROGUE_REVOKED_NAME"), os.Getenv("ROGUE_REVOKED_SECRET"))...)

	name := os.Getenv("ROGUE_NAME")
	errs := make(chan error, 100)
	nc, err := nats.Connect(*url, append(cluster.WorkerAuth(name, os.Getenv("ROGUE_SECRET")), nats.Timeout(10*time.Second), nats.NoReconnect(),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}))...)
	if err != nil {
		say("own credentials", "refused")
		return
	}
	defer nc.Close()
	say("own credentials", "connected")
	// refused waits for the server's word on what was just sent.
	refused := func() string {
		nc.Flush()
		select {
		case err := <-errs:
			if strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
				return "violation"
			}
			return "error:" + err.Error()
		case <-time.After(5 * time.Second):
			return "allowed"
		}
	}
	ask := func(attack, subject string, v any) {
		data, _ := json.Marshal(v)
		m, err := nc.Request(subject, data, 5*time.Second)
		if err != nil {
			if r := refused(); r != "allowed" {
				say(attack, r)
				return
			}
			say(attack, "error:"+err.Error())
			return
		}
		say(attack, "answer:"+string(m.Data))
	}
	// A game the rules allow? No: "white won, 0 plies" is what a rogue
	// would hand in; the claim check comes first in any case.
	played := map[string]any{"record": map[string]any{"outcome": map[string]any{"winner": "white", "loser": "black", "reason": "normal"}}}
	subject := func(kind, worker string) string { return fmt.Sprintf("taikai.game.%d.%s.%s", *game, kind, worker) }
	ask("result on the holder's subject", subject("result", *holder), map[string]any{"attempt": 1, "worker": *holder, "played": played})
	ask("result for the holder's attempt", subject("result", name), map[string]any{"attempt": 1, "worker": *holder, "played": played})
	ask("claim of a newer attempt", subject("claim", name), map[string]any{"attempt": 99, "worker": name})
	ask("result for that attempt", subject("result", name), map[string]any{"attempt": 99, "worker": name, "played": played})
	// The holder's queue message: its ack subject forged from guessable
	// sequence numbers.
	violations := 0
	for seq := 1; seq <= 10; seq++ {
		for _, verb := range []string{"-NAK", "+TERM"} {
			nc.Publish(fmt.Sprintf("$JS.ACK.%s.%s.1.%d.%d.0.0", cluster.Stream, cluster.Consumer, seq, seq), []byte(verb))
			if refused() == "violation" {
				violations++
			}
		}
	}
	say("forged acks", fmt.Sprintf("violation %d of 20", violations))
	nc.Publish(cluster.GamesSubject, []byte(`{"game":999999}`))
	say("queue a game", refused())
	nc.Publish("$JS.API.STREAM.PURGE.OBJ_"+cluster.LogBucket, nil)
	say("purge the logs", refused())
	// The holder's engine logs, by the subjects of its bucket and of the
	// bucket all workers shared before (taikai-logs): the stream, an
	// object's description, a message; putting over a description (as a
	// delete does) or a chunk; purging or deleting the stream.
	object := base64.URLEncoding.EncodeToString(fmt.Appendf(nil, "g%d-a1-black", *game))
	var read, write, purge []string
	for _, bucket := range []string{cluster.WorkerLogBucket(*holder), cluster.LogBucket} {
		stream := "OBJ_" + bucket
		read = append(read, "$JS.API.STREAM.INFO."+stream, "$JS.API.DIRECT.GET."+stream,
			"$JS.API.DIRECT.GET."+stream+".$O."+bucket+".M."+object, "$JS.API.STREAM.MSG.GET."+stream)
		write = append(write, "$O."+bucket+".M."+object, "$O."+bucket+".C.forged")
		purge = append(purge, "$JS.API.STREAM.PURGE."+stream, "$JS.API.STREAM.DELETE."+stream)
	}
	tries := func(attack string, subjects []string) {
		n := 0
		for _, s := range subjects {
			nc.Publish(s, []byte(`{"seq":1}`))
			if refused() == "violation" {
				n++
			}
		}
		say(attack, fmt.Sprintf("violation %d of %d", n, len(subjects)))
	}
	tries("read the holder's logs", read)
	tries("write the holder's logs", write)
	tries("purge the holder's logs", purge)
	// Its own bucket (made by the server at its claim above) takes its logs.
	say("own logs", ownLogs(nc, name))
	if err := nc.LastError(); err != nil && !errors.Is(err, nats.ErrPermissionViolation) {
		say("connection", "error:"+err.Error())
	}
}

// ownLogs puts a log in the rogue's own bucket, as a worker does.
func ownLogs(nc *nats.Conn, name string) string {
	js, err := jetstream.New(nc)
	if err != nil {
		return "error:" + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := js.ObjectStore(ctx, cluster.WorkerLogBucket(name))
	if err != nil {
		return "error:" + err.Error()
	}
	if _, err := store.PutBytes(ctx, "rogue.log", []byte("the rogue's own log")); err != nil {
		return "error:" + err.Error()
	}
	return "put"
}
