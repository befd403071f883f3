package etcdcluster

import (
	"encoding/json"
	"fmt"
)

// ClusterSpec is the part of an EtcdCluster's spec the hook reads.
type ClusterSpec struct {
	Size    int          `json:"size"`
	Version string       `json:"version"`
	Backup  *BackupSpec  `json:"backup,omitempty"`
	Restore *RestoreSpec `json:"restore,omitempty"`
}

// BackupSpec turns on scheduled backups and says where backups go.
type BackupSpec struct {
	// Schedule is a cron schedule ("0 */6 * * *", "@every 1h"); empty:
	// backups only on request.
	Schedule string `json:"schedule,omitempty"`
	// Keep is how many backups of this cluster to keep (0: all).
	Keep int      `json:"keep,omitempty"`
	S3   S3Config `json:"s3"`
}

// RestoreSpec seeds a new cluster from a backup.
type RestoreSpec struct {
	// Backup is the key of the backup (status.app.lastBackup.key of the
	// source cluster).
	Backup string `json:"backup"`
	// S3 is where it is; default: spec.backup.s3.
	S3 *S3Config `json:"s3,omitempty"`
}

// Store returns where the restore reads from.
func (c ClusterSpec) restoreStore() (S3Config, error) {
	if c.Restore.S3 != nil {
		return *c.Restore.S3, nil
	}
	if c.Backup != nil {
		return c.Backup.S3, nil
	}
	return S3Config{}, fmt.Errorf("restore.s3 is not set and there is no backup.s3 to default to")
}

// specFrom decodes the values the chart is given.
func specFrom(vals map[string]any) (ClusterSpec, error) {
	var s ClusterSpec
	b, err := json.Marshal(vals)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		return s, fmt.Errorf("reading the EtcdCluster spec: %w", err)
	}
	if s.Size < 1 {
		return s, fmt.Errorf("spec.size must be at least 1, got %d", s.Size)
	}
	if s.Backup != nil {
		if err := s.Backup.S3.Validate(); err != nil {
			return s, fmt.Errorf("spec.backup.%w", err)
		}
		if s.Backup.Schedule != "" {
			if _, err := ParseSchedule(s.Backup.Schedule); err != nil {
				return s, fmt.Errorf("spec.%w", err)
			}
		}
	}
	if s.Restore != nil {
		if s.Restore.Backup == "" {
			return s, fmt.Errorf("spec.restore.backup must name a backup")
		}
		cfg, err := s.restoreStore()
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			return s, fmt.Errorf("spec.restore: %w", err)
		}
	}
	return s, nil
}
