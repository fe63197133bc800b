package web_test

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsFrame is one client frame: masked, as a browser sends it (RFC 6455 5.3).
func wsFrame(fin bool, op byte, payload []byte, masked bool) []byte {
	b0 := op & 0x0f
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	m := byte(0)
	if masked {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		out = append(out, m|byte(n))
	case n <= 0xffff:
		out = append(out, m|126, byte(n>>8), byte(n))
	default:
		out = append(out, m|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if masked {
		var key [4]byte
		rand.Read(key[:])
		out = append(out, key[:]...)
		for i, c := range payload {
			out = append(out, c^key[i%4])
		}
		return out
	}
	return append(out, payload...)
}

// The websocket's client messages (a viewer only sends pongs; issue 36
// item 9): whatever a client sends after the handshake, as one frame of any
// opcode, masked or not, followed by any raw bytes, the server does not
// crash, lets go of that viewer once the client hangs up, and keeps serving
// the game to the next viewer.
func FuzzViewerMessages(f *testing.F) {
	f.Add(true, byte(websocket.PongMessage), []byte("x"), true, []byte{})
	f.Add(true, byte(websocket.TextMessage), []byte(`{"type":"move","x":3}`), true, []byte{})
	f.Add(true, byte(websocket.CloseMessage), []byte{0x03, 0xe8}, true, []byte{})
	f.Add(false, byte(websocket.BinaryMessage), []byte("part"), true, wsFrame(true, 0, []byte("rest"), true))
	f.Add(true, byte(websocket.PingMessage), make([]byte, 200), true, []byte{})
	f.Add(true, byte(websocket.TextMessage), make([]byte, 600), true, []byte{})
	f.Add(true, byte(websocket.TextMessage), []byte("unmasked"), false, []byte{})
	f.Add(true, byte(0x0b), []byte{}, true, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(true, byte(websocket.TextMessage), []byte("\xff\xfe"), true, []byte("GET / HTTP/1.1\r\n\r\n"))
	g := newLiveGame(f, 16)
	topic := fmt.Sprintf("game:%d", g.game.ID)
	host, path, _ := strings.Cut(strings.TrimPrefix(g.url, "ws://"), "/")
	f.Fuzz(func(t *testing.T, fin bool, op byte, payload []byte, masked bool, raw []byte) {
		c, err := net.DialTimeout("tcp", host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("handshake: %v %v", resp, err)
		}
		// The frame and the bytes, then end of file: the server may hang up
		// at any point, and must hang up in time after the end.
		c.Write(append(wsFrame(fin, op, payload, masked), raw...))
		c.(*net.TCPConn).CloseWrite()
		for {
			if _, err := br.Discard(1); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("the server kept the connection 20 s after the client's end of file")
				}
				break
			}
		}
		deadline := time.Now().Add(20 * time.Second)
		for g.hub.Hub.Watched(topic) {
			if time.Now().After(deadline) {
				t.Fatal("the viewer is still subscribed 20 s after it hung up")
			}
			time.Sleep(time.Millisecond)
		}
		v := dialViewer(t, g.url)
		v.conn.Close()
		<-v.done
	})
}
