package protocol_test

import (
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
)

// BenchmarkReadLineTCP reads a move's line from loopback TCP, one written
// per read as an engine writes them, with the time of each taken where the
// kernel gives one (recvmsg and its control message on Linux) and, as the
// baseline, when it is read (TAIKAI_RECEIVE_TIME=read: a plain read).
func BenchmarkReadLineTCP(b *testing.B) {
	for _, mode := range []string{"kernel", "read"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "read" {
				b.Setenv("TAIKAI_RECEIVE_TIME", "read")
			}
			c, s := protocoltest.TCPPair(b)
			s.SetReadDeadline(time.Now().Add(time.Minute))
			conn := protocol.NewConn(s)
			line := []byte("PUT 3 2\n")
			next := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				for range next {
					if _, err := c.Write(line); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for b.Loop() {
				next <- struct{}{}
				if got, _, err := conn.ReadLine(); err != nil || len(got) != 7 {
					b.Fatalf("ReadLine: %q, %v", got, err)
				}
				conn.Invited() // not a flood
			}
			close(next)
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
