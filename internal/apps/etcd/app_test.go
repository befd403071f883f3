package etcd_test

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/apps/etcd"
	"github.com/chartkeeper/chartkeeper/internal/cli"
	"github.com/chartkeeper/chartkeeper/internal/etcdcluster"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// The flags configure the hook registered for a watched EtcdCluster kind.
func TestFlagsConfigureTheHook(t *testing.T) {
	tests := []struct {
		args              []string
		wantErr, loopback bool
		image             string
	}{
		{args: nil},
		{args: []string{"--etcd-member-addressing", "pod-dns", "--etcd-restore-image", "mirror/chartkeeper:1"}, image: "mirror/chartkeeper:1"},
		{args: []string{"--etcd-member-addressing=loopback"}, loopback: true},
		{args: []string{"--etcd-member-addressing", "carrier-pigeon"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			apps.BindFlags(fs)
			if err := fs.Parse(tt.args); (err != nil) != tt.wantErr {
				t.Fatalf("parse: %v, want an error: %t", err, tt.wantErr)
			} else if err != nil {
				return
			}
			reg := hooks.NewRegistry()
			if err := apps.AddHooks(reg, func(gk schema.GroupKind) bool { return gk == etcd.EtcdCluster }); err != nil {
				t.Fatal(err)
			}
			hs := reg.For(etcd.EtcdCluster)
			if len(hs) != 1 || hs[0].Name != "etcd" {
				t.Fatalf("hooks %+v, want the etcd hook", hs)
			}
			h := hs[0].Impl.(*etcdcluster.Hook)
			if (h.Address != nil) != tt.loopback || h.RestoreImage != tt.image {
				t.Errorf("hook: loopback %t, restore image %q", h.Address != nil, h.RestoreImage)
			}
		})
	}
	reg := hooks.NewRegistry()
	if err := apps.AddHooks(reg, func(schema.GroupKind) bool { return false }); err != nil || reg.For(etcd.EtcdCluster) != nil {
		t.Errorf("an unwatched EtcdCluster got hooks (%v)", err)
	}
}

// chartkeeper run -h and images -h show the app's flags, and chartkeeper
// etcd-restore keeps its flags and exit codes.
func TestCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"run help", []string{"run", "-h"}, nil, cli.ExitOK, "", "-etcd-member-addressing"},
		{"images help", []string{"images", "-h"}, nil, cli.ExitOK, "", "-etcd-restore-image"},
		{"bad addressing", []string{"run", "--etcd-member-addressing", "x"}, nil, cli.ExitConfig, "", "must be pod-dns or loopback"},
		{"usage line", []string{"help"}, nil, cli.ExitOK, "chartkeeper etcd-restore    seed an EtcdCluster member from a backup", ""},
		{"restore help", []string{"etcd-restore", "-h"}, nil, cli.ExitOK, "", "-s3-bucket"},
		{"restore unknown flag", []string{"etcd-restore", "--nope"}, nil, cli.ExitConfig, "", "nope"},
		{"restore missing flags", []string{"etcd-restore", "--backup", "b"}, nil, cli.ExitConfig, "", "are required"},
		{"restore joining member", []string{"etcd-restore", "--backup", "b", "--name", "e-1", "--seed", "e-0", "--data-dir", t.TempDir(), "--peer-url", "http://e-1:2380"},
			map[string]string{"ETCD_INITIAL_CLUSTER_STATE": "new"}, cli.ExitOK, "nothing to restore", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var out, errOut bytes.Buffer
			if code := cli.Main(tt.args, &out, &errOut); code != tt.code {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.code, errOut.String())
			}
			if !strings.Contains(out.String(), tt.wantStdout) || !strings.Contains(errOut.String(), tt.wantStderr) {
				t.Errorf("stdout %q, stderr %q: want %q and %q", out.String(), errOut.String(), tt.wantStdout, tt.wantStderr)
			}
		})
	}
}
