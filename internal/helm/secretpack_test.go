package helm

import (
	"bytes"
	"encoding/base64"
	"maps"
	"testing"
)

func TestPackGivesTheSameDataBack(t *testing.T) {
	payload := bytes.Repeat([]byte{0x1f, 0x8b, 0x08, 0x00, 0xff}, 200)
	text := []byte(base64.StdEncoding.EncodeToString(payload))
	for _, c := range []struct {
		name   string
		data   map[string][]byte
		packed bool // the release payload is kept decoded
	}{
		{"helm's payload", map[string][]byte{"release": text}, true},
		{"with other keys", map[string][]byte{"release": text, "chunk": {1, 2, 3}}, true},
		{"not base64", map[string][]byte{"release": []byte("{not base64}")}, false},
		{"with a line break", map[string][]byte{"release": append(append([]byte{}, text[:8]...), append([]byte("\n"), text[8:]...)...)}, false},
		{"non-zero padding bits", map[string][]byte{"release": []byte("QR==")}, false},
		{"empty payload", map[string][]byte{"release": {}}, false},
		{"no payload", map[string][]byte{"other": []byte("x")}, false},
		{"no data", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := pack(c.data)
			if got := p.release.kept(); got != c.packed {
				t.Errorf("packed = %v, want %v", got, c.packed)
			}
			if held := heldPayloadBytes(p); c.packed && held >= len(c.data["release"]) {
				t.Errorf("packed payload is %d bytes, its text %d: want it smaller", held, len(c.data["release"]))
			}
			got, err := p.unpack()
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, c.data, bytes.Equal) {
				t.Errorf("unpack = %q, want %q", got, c.data)
			}
			for k := range got {
				got[k] = nil // the caller's copy: the packed data must not change
			}
			if again, _ := p.unpack(); !maps.EqualFunc(again, c.data, bytes.Equal) {
				t.Errorf("after the caller changed its copy, unpack = %q, want %q", again, c.data)
			}
		})
	}
}
