package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"unique"
)

// payload is a release Secret's data["release"] as the secret cache keeps
// it: the gzip that Helm's base64 text decodes to, a quarter smaller than
// the text.
//
// Most of that gzip is the release's chart: templates, default values,
// schema and files, the same bytes in every revision of every release of
// one chart version (three quarters of the gzip with the bench's chart,
// four fifths with a podinfo-shaped one). So the cache keeps a payload
// that is the gzip of a JSON object with a chart member as the gzip of the
// JSON without that member, and the member once for all its holders
// (package unique: it goes when no payload holds it).
//
// text gives that JSON back byte for byte, base64 without the gzip: Helm's
// Secret driver decodes a payload with or without gzip (the format of
// releases stored before it compressed them), so no read pays for a
// compression. A payload of another shape comes back as it came.
type payload struct {
	gz    []byte                // with chart: the gzip of the JSON without the chart member
	chart unique.Handle[string] // the member as it was, its leading comma included; zero: gz is the payload as it came
	at    int                   // where the member goes back into the JSON
}

// chartMember is the payload's top-level member kept once.
const chartMember = "chart"

// maxPayloadJSON bounds what a payload may decompress to before it is kept
// as it came (a Secret holds at most 1 MiB of gzip).
const maxPayloadJSON = 64 << 20

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// packPayload keeps gz (data["release"] base64-decoded), its chart apart
// when it has one.
func packPayload(gz []byte) payload {
	if !bytes.HasPrefix(gz, gzipMagic) {
		return payload{gz: gz}
	}
	js, err := gunzip(gz)
	if err != nil {
		return payload{gz: gz}
	}
	start, end, ok := memberSpan(js, chartMember)
	if !ok {
		return payload{gz: gz}
	}
	body, err := gzipBytes(append(js[:start:start], js[end:]...))
	if err != nil {
		return payload{gz: gz}
	}
	return payload{gz: body, chart: unique.Make(string(js[start:end])), at: start}
}

// shared reports whether the payload's chart is kept apart.
func (p payload) shared() bool { return p.chart != unique.Handle[string]{} }

// text is data["release"] for a read: the payload's base64 text as it came
// or, its chart kept apart, the base64 of its JSON.
func (p payload) text() ([]byte, error) {
	if !p.shared() {
		return base64.StdEncoding.AppendEncode(nil, p.gz), nil
	}
	body, err := gunzip(p.gz)
	if err != nil {
		return nil, err
	}
	if p.at > len(body) {
		return nil, errors.New("release payload: chart offset past its body")
	}
	chart := p.chart.Value()
	text := bytes.NewBuffer(make([]byte, 0, base64.StdEncoding.EncodedLen(len(body)+len(chart))))
	enc := base64.NewEncoder(base64.StdEncoding, text)
	enc.Write(body[:p.at])  // writes to a bytes.Buffer do not fail
	var chunk [3 << 10]byte // the chart string in pieces, not one copy of it
	for rest := chart; rest != ""; {
		n := copy(chunk[:], rest)
		enc.Write(chunk[:n])
		rest = rest[n:]
	}
	enc.Write(body[p.at:])
	enc.Close()
	return text.Bytes(), nil
}

// memberSpan finds the top-level member name of the JSON object js: from
// the end of the member before it (so its comma is inside) to the end of
// its value. It only scans (strings, escapes, nesting), it does not
// validate: whatever span it finds, the bytes go back where they were.
func memberSpan(js []byte, name string) (start, end int, ok bool) {
	i := skipSpace(js, 0)
	if i >= len(js) || js[i] != '{' {
		return 0, 0, false
	}
	before := i + 1 // the end of the member before (here: the brace)
	for i = before; ; {
		i = skipSpace(js, i)
		if i < len(js) && js[i] == ',' {
			i = skipSpace(js, i+1)
		}
		if i >= len(js) || js[i] != '"' {
			return 0, 0, false
		}
		keyEnd, ok := stringEnd(js, i)
		if !ok {
			return 0, 0, false
		}
		key := js[i+1 : keyEnd-1]
		i = skipSpace(js, keyEnd)
		if i >= len(js) || js[i] != ':' {
			return 0, 0, false
		}
		valueEnd, ok := valueEnd(js, skipSpace(js, i+1))
		if !ok {
			return 0, 0, false
		}
		if string(key) == name {
			return before, valueEnd, true
		}
		before, i = valueEnd, valueEnd
	}
}

func skipSpace(js []byte, i int) int {
	for i < len(js) && (js[i] == ' ' || js[i] == '\t' || js[i] == '\n' || js[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at js[i] ('"').
func stringEnd(js []byte, i int) (int, bool) {
	for i++; i < len(js); i++ {
		switch js[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// valueEnd returns the index after the value that starts at js[i].
func valueEnd(js []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(js); i++ {
		switch c := js[i]; c {
		case '"':
			end, ok := stringEnd(js, i)
			if !ok {
				return 0, false
			}
			if depth == 0 {
				return end, true
			}
			i = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a number, true, false or null
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',':
			if depth == 0 {
				return i, true
			}
		default:
			if depth == 0 && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
				return i, true
			}
		}
	}
	if depth == 0 {
		return i, true // a number, true, false or null at the end
	}
	return 0, false
}

// gzipReaders are reused decompressors (Reset between uses).
var gzipReaders sync.Pool

var errPayloadTooLarge = errors.New("payload decompresses past the bound")

// gunzip decompresses gz as Helm does (every gzip member), to at most
// maxPayloadJSON bytes.
func gunzip(gz []byte) ([]byte, error) {
	r, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(gz))
	} else {
		err = r.Reset(bytes.NewReader(gz))
	}
	if err != nil {
		return nil, err
	}
	defer gzipReaders.Put(r)
	// The gzip trailer's last four bytes are the size it decompresses to
	// (of its last member): room for it at once, not grown by doubling.
	size := 0
	if n := len(gz); n >= 4 {
		size = int(min(binary.LittleEndian.Uint32(gz[n-4:]), maxPayloadJSON))
	}
	var out bytes.Buffer
	out.Grow(size + bytes.MinRead)
	if _, err := out.ReadFrom(io.LimitReader(r, maxPayloadJSON+1)); err != nil {
		return nil, err
	}
	if out.Len() > maxPayloadJSON {
		return nil, errPayloadTooLarge
	}
	return out.Bytes(), nil
}

// gzipBytes compresses b as Helm does (best compression), into a slice of
// its own size.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := gzipTo(&buf, b); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// gzipWriters are reused compressors (Reset between uses).
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression) // a valid level: no error
	return w
}}

// gzipTo writes the gzip of b (best compression) to buf.
func gzipTo(buf *bytes.Buffer, b []byte) error {
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(buf)
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Close()
}
