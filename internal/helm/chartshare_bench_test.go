package helm

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// go test ./internal/helm -run '^$' -bench Payload -benchmem: what keeping
// a payload's chart once costs a write (pack) and a read (unpack), beside
// what the cache did before (the payload kept as the gzip it came as).
func BenchmarkPayload(b *testing.B) {
	text, err := encodeRelease(webappRelease(b, "web", "a", 1))
	if err != nil {
		b.Fatal(err)
	}
	data := map[string][]byte{"release": []byte(text)}
	b.Run("pack", func(b *testing.B) {
		for range b.N {
			pack(data)
		}
	})
	p := pack(data)
	b.Run("unpack", func(b *testing.B) {
		for range b.N {
			if _, err := p.unpack(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("as it came: pack and unpack", func(b *testing.B) {
		for range b.N {
			raw, _ := decodeCanonical(data["release"])
			base64.StdEncoding.AppendEncode(nil, raw)
		}
	})
}

// go test ./internal/helm -run '^$' -bench HeldPerRevision: the live heap
// the secret cache holds per revision Secret of the webapp chart, with 100
// releases of 10 revisions each (maxHistory's default), labels and
// metadata included.
func BenchmarkHeldPerRevision(b *testing.B) {
	const releases, revisions = 100, 10
	var secrets []*corev1.Secret
	for r := range releases {
		for v := 1; v <= revisions; v++ {
			rel := webappRelease(b, fmt.Sprintf("web-%03d", r), "a", v)
			s, err := revisionSecret(fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, v), rel, "modifiedAt")
			if err != nil {
				b.Fatal(err)
			}
			s.Namespace, s.ResourceVersion = "a", strconv.Itoa(r*revisions+v)
			secrets = append(secrets, s)
		}
	}
	var held float64
	for range b.N {
		c := newSecretCache(nil, ManagedSecrets)
		before := liveHeap()
		for _, s := range secrets {
			c.remember(s)
		}
		held = float64(liveHeap()-before) / float64(len(secrets))
		runtime.KeepAlive(c)
	}
	b.ReportMetric(held, "B/revision")
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// go test ./internal/helm -run '^$' -bench EncodeRelease: what a write's
// encoding (JSON, gzip at best compression, base64) of a charts/webapp
// release costs; writes take turns at one compressor for it.
func BenchmarkEncodeRelease(b *testing.B) {
	rls := webappRelease(b, "web", "a", 1)
	for range b.N {
		if _, err := encodeRelease(rls); err != nil {
			b.Fatal(err)
		}
	}
}
