package release

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		name, s, tail string
		limit         int
		want          string
	}{
		{"fits", "short", "…", 10, "short"},
		{"exactly", "0123456789", "…", 10, "0123456789"},
		{"cut", "0123456789abc", "...", 10, "0123456..."},
		// "é" is two bytes: a cut inside it goes back to its start.
		{"rune boundary", "abcdéfghijkl", "..", 7, "abcd.."},
		{"multi-byte tail", "ééééé", "…", 7, "éé…"},
		{"tail longer than limit", "0123456789", "tail!", 3, "tail!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shorten(tc.s, tc.limit, tc.tail)
			if got != tc.want {
				t.Errorf("shorten(%q, %d, %q) = %q, want %q", tc.s, tc.limit, tc.tail, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("%q is not valid UTF-8", got)
			}
		})
	}
}

// noteRecorder keeps the note of each Event.
type noteRecorder struct{ notes []string }

func (r *noteRecorder) Eventf(_ runtime.Object, _ runtime.Object, _, _, _, note string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(note, args...))
}

// An Event note never exceeds what the API server accepts (1,024 bytes),
// keeps its start, says it was shortened and stays valid UTF-8; a message
// holding % signs is not read as a format.
func TestEventNotesFitTheAPILimit(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		cut       bool
	}{
		{"short", "install failed: 100% broken", false},
		{"at the limit", strings.Repeat("x", maxEventNote), false},
		{"long ASCII", strings.Repeat("forbidden: cannot create roles; ", 100), true},
		{"long multi-byte", strings.Repeat("verboten: ä€😀 ", 200), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &noteRecorder{}
			e := &Engine{recorder: rec}
			e.event(&unstructured.Unstructured{}, true, api.ReasonInstallFailed, "%s", tc.msg)
			if len(rec.notes) != 1 {
				t.Fatalf("%d events", len(rec.notes))
			}
			note := rec.notes[0]
			if len(note) > maxEventNote || !utf8.ValidString(note) {
				t.Errorf("note of %d bytes (valid UTF-8: %v)", len(note), utf8.ValidString(note))
			}
			if !tc.cut {
				if note != tc.msg {
					t.Errorf("note %q, want %q", note, tc.msg)
				}
				return
			}
			if !strings.HasSuffix(note, eventShortened) || !strings.HasPrefix(tc.msg, strings.TrimSuffix(note, eventShortened)) {
				t.Errorf("note %q is not the message's start marked shortened", note)
			}
			if len(note) < maxEventNote-utf8.UTFMax {
				t.Errorf("note of %d bytes: cut more than needed", len(note))
			}
		})
	}
}
