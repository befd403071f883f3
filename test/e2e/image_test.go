package e2e

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// dockerInstr is one Dockerfile instruction, its continuation lines joined.
type dockerInstr struct{ cmd, args string }

// dockerStage is one FROM ... stage.
type dockerStage struct {
	from, name string
	instrs     []dockerInstr
}

// parseDockerfile splits a Dockerfile into stages of instructions: comments
// and blank lines dropped, lines ending in a backslash joined.
func parseDockerfile(text string) []dockerStage {
	var stages []dockerStage
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		cmd, args = strings.ToUpper(cmd), strings.TrimSpace(args)
		if cmd == "FROM" {
			f := strings.Fields(args)
			st := dockerStage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			return
		}
		if len(stages) > 0 {
			stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, dockerInstr{cmd, args})
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") && cur.Len() == 0 || t == "" && cur.Len() == 0 {
			continue
		}
		if s, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return stages
}

// The manager image, checked without a container engine: the build stage's
// own `go build` command, run on a copy of only what the stage COPYs, gives
// a static binary (no ELF interpreter, no shared library: it runs on a
// distroless static base) that runs `version` with the version stamped;
// the last stage copies that binary to where its ENTRYPOINT runs it, ships
// the watches file and charts the repository has, and runs as a numeric
// non-root user (a Deployment's runAsNonRoot can only verify a numeric one)
// on a base without a shell or package manager.
func TestManagerImage(t *testing.T) {
	parallel(t, 30*time.Second) // no cluster: a build and a file of the repository
	root := testenv.RepoRoot()
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := parseDockerfile(string(b))
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]

	// The build stage: copy what it COPYs, run its go build there.
	src := t.TempDir()
	var goBuild string
	args := map[string]string{}
	for _, in := range build.instrs {
		switch in.cmd {
		case "COPY":
			f := strings.Fields(in.args)
			for _, p := range f[:len(f)-1] {
				dst := filepath.Join(src, strings.TrimSuffix(p, "/"))
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					t.Fatal(err)
				}
				cp := exec.Command("cp", "-r", filepath.Join(root, p), dst)
				if out, err := cp.CombinedOutput(); err != nil {
					t.Fatalf("COPY %s: %v\n%s", p, err, out)
				}
			}
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case "RUN":
			if strings.Contains(in.args, "go build") {
				goBuild = in.args
			}
		}
	}
	if goBuild == "" {
		t.Fatal("the build stage runs no go build")
	}
	if !regexp.MustCompile(`(^|\s)CGO_ENABLED=0\s`).MatchString(goBuild) {
		t.Errorf("the build does not disable cgo: %s", goBuild)
	}
	outFlag := regexp.MustCompile(`\s-o\s+(\S+)`).FindStringSubmatch(goBuild)
	if outFlag == nil {
		t.Fatalf("the build names no output (-o): %s", goBuild)
	}
	bin := filepath.Join(t.TempDir(), "chartkeeper")
	const stamp = "v0.0.0-image-test"
	cmd := exec.Command("sh", "-c", strings.Replace(goBuild, outFlag[0], " -o "+bin, 1))
	cmd.Dir = src
	// The ARGs as the build sees them, VERSION stamped; nothing of the
	// caller's environment that decides the kind of binary.
	cmd.Env = append(os.Environ(), "VERSION="+stamp, "CGO_ENABLED=1", "GOFLAGS=")
	for k, v := range args {
		if k != "VERSION" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the build stage's go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary needs an ELF interpreter: it is not static")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary links shared libraries %v (%v): it is not static", libs, err)
	}
	// As in the image: no environment, another working directory.
	run := exec.Command(bin, "version")
	run.Dir, run.Env = t.TempDir(), []string{}
	out, err := run.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "chartkeeper "+stamp) {
		t.Errorf("chartkeeper version: %v: %q, want chartkeeper %s", err, out, stamp)
	}

	// The image stage.
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") {
		t.Errorf("final stage FROM %s, want a distroless static image", final.from)
	}
	var user, installed string
	var entrypoint []string
	for _, in := range final.instrs {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entrypoint); err != nil {
				t.Errorf("ENTRYPOINT %s: not the exec form: %v", in.args, err)
			}
		case "COPY":
			f := strings.Fields(in.args)
			if strings.HasPrefix(f[0], "--from=") {
				if f[0] != "--from="+build.name || f[1] != outFlag[1] {
					t.Errorf("COPY %s: want the build stage's %s", in.args, outFlag[1])
				}
				installed = f[len(f)-1]
				continue
			}
			for _, p := range f[:len(f)-1] {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("COPY %s: %v", p, err)
				}
			}
		}
	}
	if len(entrypoint) == 0 || installed == "" || entrypoint[0] != installed {
		t.Errorf("ENTRYPOINT %q does not run the binary copied to %q", entrypoint, installed)
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("final stage USER %q, want a numeric non-root uid", user)
	}
}
