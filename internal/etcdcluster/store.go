package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store keeps snapshots by key.
type Store interface {
	// Put stores size bytes from r under key.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Get opens the object under key.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns the keys under prefix, oldest name first.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes key.
	Delete(ctx context.Context, key string) error
}

// S3Config locates an S3-compatible bucket (AWS S3, MinIO, Ceph RGW...).
type S3Config struct {
	// Endpoint is host[:port], without a scheme.
	Endpoint string `json:"endpoint"`
	Bucket   string `json:"bucket"`
	// Prefix is prepended to every key ("" for none).
	Prefix string `json:"prefix,omitempty"`
	Region string `json:"region,omitempty"`
	// Insecure talks plain HTTP (for an in-cluster store without TLS).
	Insecure bool `json:"insecure,omitempty"`
	// CredentialsSecret names a Secret in the cluster's namespace with
	// the keys accessKeyID and secretAccessKey.
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// Validate reports what is missing.
func (c S3Config) Validate() error {
	var missing []string
	if c.Endpoint == "" {
		missing = append(missing, "endpoint")
	}
	if c.Bucket == "" {
		missing = append(missing, "bucket")
	}
	if strings.Contains(c.Endpoint, "://") {
		return fmt.Errorf("s3.endpoint %q must be host[:port] without a scheme (set insecure: true for http)", c.Endpoint)
	}
	if len(missing) > 0 {
		return fmt.Errorf("s3: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// S3Store is a Store in an S3-compatible bucket, through minio-go.
type S3Store struct {
	cfg S3Config
	c   *minio.Client
}

// NewS3Store connects to the bucket with static credentials.
func NewS3Store(cfg S3Config, accessKey, secretKey string) (*S3Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Secure: !cfg.Insecure, Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", cfg.Endpoint, err)
	}
	return &S3Store{cfg: cfg, c: c}, nil
}

func (s *S3Store) key(k string) string {
	if s.cfg.Prefix == "" {
		return k
	}
	return strings.TrimSuffix(s.cfg.Prefix, "/") + "/" + k
}

// Put implements Store.
func (s *S3Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	_, err := s.c.PutObject(ctx, s.cfg.Bucket, s.key(key), r, size, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return fmt.Errorf("s3 put %s/%s: %w", s.cfg.Bucket, s.key(key), err)
	}
	return nil
}

// Get implements Store.
func (s *S3Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	o, err := s.c.GetObject(ctx, s.cfg.Bucket, s.key(key), minio.GetObjectOptions{})
	if err == nil {
		_, err = o.Stat()
	}
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, fmt.Errorf("backup %s: %w", key, ErrNoBackup)
		}
		return nil, fmt.Errorf("s3 get %s/%s: %w", s.cfg.Bucket, s.key(key), err)
	}
	return o, nil
}

// List implements Store.
func (s *S3Store) List(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	full := s.key(prefix)
	for o := range s.c.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: full, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("s3 list %s/%s: %w", s.cfg.Bucket, full, o.Err)
		}
		out = append(out, strings.TrimPrefix(o.Key, s.key("")))
	}
	sort.Strings(out)
	return out, nil
}

// Delete implements Store.
func (s *S3Store) Delete(ctx context.Context, key string) error {
	if err := s.c.RemoveObject(ctx, s.cfg.Bucket, s.key(key), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3 delete %s/%s: %w", s.cfg.Bucket, s.key(key), err)
	}
	return nil
}

// ErrNoBackup: the named backup does not exist in the store.
var ErrNoBackup = errors.New("no such backup")
