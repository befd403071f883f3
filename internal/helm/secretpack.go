package helm

import (
	"bytes"
	"encoding/base64"
)

// packedData is a release Secret's data as the secret cache keeps it.
// Helm's payload, data["release"], is base64 text of the gzip of the
// release: the cache keeps the release's JSON, its chart kept once for
// every revision that has it and the rest packed against another
// release's of the chart, or gzipped when long (payload). A value that
// is not canonical base64 and every other key are kept as they are.
type packedData struct {
	release payload           // data["release"] decoded (not kept(): not packed)
	rest    map[string][]byte // the other keys (and release, if not packed)
}

// releaseKeyName is the data key of Helm's Secret driver.
const releaseKeyName = "release"

func pack(data map[string][]byte) packedData {
	var p packedData
	if text := data[releaseKeyName]; len(text) > 0 {
		if raw, canonical := decodeCanonical(text); canonical {
			p.release = packPayload(raw)
		}
	}
	for k, v := range data {
		if k == releaseKeyName && p.release.kept() {
			continue
		}
		if p.rest == nil {
			p.rest = make(map[string][]byte, len(data))
		}
		p.rest[k] = bytes.Clone(v)
	}
	return p
}

// decodeCanonical decodes standard base64 text that encodes back to the
// same text.
func decodeCanonical(text []byte) ([]byte, bool) {
	if bytes.ContainsAny(text, "\r\n") {
		return nil, false
	}
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Strict().Decode(raw, text)
	if err != nil || base64.StdEncoding.EncodedLen(n) != len(text) {
		return nil, false
	}
	return raw[:n:n], true
}

// unpack returns the data (a copy the caller owns): every key as it was
// packed, the release payload as its text gives it (payload.text: the same
// release, maybe without the gzip).
func (p packedData) unpack() (map[string][]byte, error) {
	if !p.release.kept() && p.rest == nil {
		return nil, nil
	}
	out := make(map[string][]byte, len(p.rest)+1)
	for k, v := range p.rest {
		out[k] = bytes.Clone(v)
	}
	if p.release.kept() {
		text, err := p.release.text()
		if err != nil {
			return nil, err
		}
		out[releaseKeyName] = text
	}
	return out, nil
}
