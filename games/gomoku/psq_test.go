package gomoku

import (
	"bytes"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
)

func TestPSQRoundTrip(t *testing.T) {
	recs := []games.RecordGame{
		{Black: "a", White: "b", Size: 15, Reason: games.ReasonNormal, Moves: []games.Ply{{Move: games.Move{X: 7, Y: 7}, MS: 5}, {Move: games.Move{X: 0, Y: 14}, MS: 17}}},
		{Black: "c\nd", White: "e", Size: 20, Reason: games.ReasonTimeout, Moves: []games.Ply{{Move: games.Move{X: 19, Y: 0}}}},
	}
	var buf bytes.Buffer
	if err := PSQ.Write(&buf, recs); err != nil {
		t.Fatal(err)
	}
	want := "Piskvorky 15x15, 11:11, 0\n8,8,5\n1,15,17\na\nb\n0\nPiskvorky 20x20, 11:11, 0\n20,1,0\nc d\ne\n-1\n"
	if buf.String() != want {
		t.Fatalf("PSQ:\n%s\nwant\n%s", buf.String(), want)
	}
	got, err := PSQ.Read(strings.NewReader(buf.String()))
	if err != nil || len(got) != 2 || len(got[0]) != 2 || !got[0][1].Equal(games.Move{X: 0, Y: 14}) || !got[1][0].Equal(games.Move{X: 19, Y: 0}) {
		t.Fatalf("read %v %v", got, err)
	}
	pass := []games.RecordGame{{Size: 15, Moves: []games.Ply{{Move: games.PassMove}}}}
	if err := PSQ.Write(&buf, pass); err == nil {
		t.Error("a pass written")
	}
	for _, bad := range []string{"", "8,8,0\n", "Piskvorky 15x16, 11:11, 0\n", "Piskvorky 15x15, 11:11, 1\n", "Piskvorky 15x15, 11:11, 0\n0,3,0\n"} {
		if _, err := PSQ.Read(strings.NewReader(bad)); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}
