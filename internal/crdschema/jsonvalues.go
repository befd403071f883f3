package crdschema

import (
	"bytes"
	"encoding/json"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func str(s map[string]any, k string) string {
	v, _ := s[k].(string)
	return v
}

func num(s map[string]any, k string) (float64, bool) {
	n, ok := s[k].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func intPtr(s map[string]any, k string) *int64 {
	n, ok := s[k].(json.Number)
	if !ok {
		return nil
	}
	if i, err := n.Int64(); err == nil && i >= 0 {
		return &i
	}
	return nil
}

func strPtr(s string) *string { return &s }

func rawJSON(v any) *apiextv1.JSON {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return &apiextv1.JSON{Raw: b}
}

// decodeJSON parses JSON keeping numbers exact (json.Number).
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
