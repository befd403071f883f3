package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"io"
	"sync"
	"unique"

	"github.com/chartkeeper/chartkeeper/internal/dictpack"
)

// payload is a release Secret's data["release"] as the secret cache keeps
// it.
//
// Most of Helm's payload (the gzip of the release's JSON) is the
// release's chart: templates, default values, schema and files, the same
// bytes in every revision of every release of one chart version (three
// quarters of the gzip with the bench's chart, four fifths with a
// podinfo-shaped one). So the cache keeps a payload that is the gzip of a
// JSON object with a chart member as the JSON without that member (the
// body) and the member once for all its holders (package unique: it goes
// when no payload holds it).
//
// The body is packed against the body of another release of the same
// chart (package dictpack, bodyFamilies): two releases of a chart differ
// in names, values and times, and their rendered manifests in little
// else, so a bench release's body keeps 7% of its JSON (dictpack_test.go),
// where its gzip keeps over a quarter. Packing it costs no compressor
// state; gzip at its best makes a megabyte of it for each.
//
// text gives that JSON back byte for byte, base64 without the gzip: Helm's
// Secret driver decodes a payload with or without gzip (the format of
// releases stored before it compressed them), so no read pays for a
// compression. A payload of another shape is kept as it came.
//
// A body longer than maxPackedBody is kept as its gzip instead, as before
// there were dictionaries: past a few KB, what a body repeats of itself
// outweighs what it shares with another release's, and gzip at its best
// keeps less of it than S2 does (up to half as much with a long
// manifest), for a compression that is a small part of the write.
type payload struct {
	asIs   []byte                // chart zero: the payload as it came (gzip or not)
	body   dictpack.Packed       // chart set, a body up to maxPackedBody: the JSON without its chart member
	gzBody []byte                // chart set, a longer body: the gzip of the JSON without its chart member
	chart  unique.Handle[string] // the member as it was, its leading comma included
	at     int                   // where the member goes back into the body
}

// maxPackedBody is the longest body packed against its chart's; a longer
// one is kept as its gzip (payload).
const maxPackedBody = 8 << 10

// chartMember is the payload's top-level member kept once.
const chartMember = "chart"

// maxPayloadJSON bounds what a payload may decompress to before it is kept
// as it came (a Secret holds at most 1 MiB of gzip).
const maxPayloadJSON = 64 << 20

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// bodyFamilies packs release bodies, one family per chart (the hash of its
// member): at most 256 charts hold a dictionary at once, each up to
// s2.MaxDictSize of a body and its tables, and dictpack.DefaultMaxBytes
// (8 MiB) in all.
var bodyFamilies = dictpack.Families[uint64]{Max: 256}

// chartSeed is the seed of chart members' hashes.
var chartSeed = maphash.MakeSeed()

// packPayload keeps gz (data["release"] base64-decoded), its chart apart
// when it has one.
func packPayload(gz []byte) payload {
	if !bytes.HasPrefix(gz, gzipMagic) {
		return payload{asIs: gz}
	}
	js, err := gunzip(gz)
	if err != nil {
		return payload{asIs: gz}
	}
	start, end, ok := memberSpan(js, chartMember)
	if !ok {
		return payload{asIs: gz}
	}
	chart := js[start:end]
	body := append(js[:start:start], js[end:]...) // a slice of its own
	p := payload{chart: unique.Make(string(chart)), at: start}
	if len(body) <= maxPackedBody {
		p.body = bodyFamilies.Pack(maphash.Bytes(chartSeed, chart), body)
		return p
	}
	var buf bytes.Buffer
	if err := gzipTo(&buf, body); err != nil {
		return payload{asIs: gz}
	}
	p.gzBody = bytes.Clone(buf.Bytes())
	return p
}

// kept reports whether the payload holds anything.
func (p payload) kept() bool { return p.asIs != nil || p.shared() }

// shared reports whether the payload's chart is kept apart.
func (p payload) shared() bool { return p.chart != unique.Handle[string]{} }

// text is data["release"] for a read: the payload's base64 text as it came
// or, its chart kept apart, the base64 of its JSON.
func (p payload) text() ([]byte, error) {
	if !p.shared() {
		return base64.StdEncoding.AppendEncode(nil, p.asIs), nil
	}
	if p.gzBody != nil {
		body, err := gunzip(p.gzBody)
		if err != nil {
			return nil, err
		}
		return p.withChart(body)
	}
	var text []byte
	err := p.body.Unpack(func(body []byte) (err error) {
		text, err = p.withChart(body)
		return err
	})
	return text, err
}

// withChart is the base64 of body with the chart member back in place.
func (p payload) withChart(body []byte) ([]byte, error) {
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
