package protocol_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/taikai-dev/taikai/engines/protocol"
	"github.com/taikai-dev/taikai/engines/protocol/protocoltest"
)

// The line reader under the common limits, on any bytes: no line over
// MaxLine and none with a newline comes out, too-long lines are reported,
// and the input ends in a bounded number of reads.
func FuzzReadLine(f *testing.F) {
	for _, seed := range []string{"PUT 3 2\r\n", "a\nb\n\nc", string(bytes.Repeat([]byte("x"), 4097)), string(bytes.Repeat([]byte("y"), 4096)) + "\n", "\r\r\n\n", ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		c := protocol.NewConn(protocoltest.NewStream(input))
		for n := 0; ; n++ {
			if n > len(input)+2 {
				t.Fatalf("%d reads of %d bytes and still no end", n, len(input))
			}
			line, _, err := c.ReadLine()
			if errors.Is(err, protocol.ErrLineTooLong) {
				continue
			}
			if err == io.EOF || errors.Is(err, protocol.ErrFlood) {
				return
			}
			if err != nil {
				t.Fatalf("read %d: %v", n, err)
			}
			if len(line) > protocol.MaxLine || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("read %d: a line of %d bytes with a newline at %d", n, len(line), bytes.IndexByte(line, '\n'))
			}
		}
	})
}
