package pbrain

import (
	"bytes"
	"io"
	"testing"
	"time"

	"testing/iotest"
)

type stream struct{ io.Reader }

func (stream) Write(b []byte) (int, error)      { return len(b), nil }
func (stream) Close() error                     { return nil }
func (stream) SetWriteDeadline(time.Time) error { return nil }

// CR LF, LF and CR alone all end a line once, also when a CR LF is split
// between two reads.
func TestLineEnds(t *testing.T) {
	in := "7,7\r\n8,8\n9,9\r10,10\r\n\r\n11,11"
	r := newCRAsLF(stream{iotest.OneByteReader(bytes.NewReader([]byte(in)))})
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "7,7\n8,8\n9,9\n10,10\n\n11,11"; string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
}

func TestAboutNick(t *testing.T) {
	for in, want := range map[string]string{
		`name="SomeBrain", version="1.0", author="Nymand", country="USA"`: "SomeBrain 1.0 by Nymand",
		`name="Rapfi", version="2024.01", author="Rapfi developers"`:      "Rapfi 2024.01",
		`name="x"`:                 "x",
		`NAME = "y" , Version="2"`: "y 2",
	} {
		if got := aboutNick(in); got != want {
			t.Errorf("%s: nick %q, want %q", in, got, want)
		}
	}
}
