package crdschema

import "strings"

// Keywords a converted schema carries over (or that only annotate).
var handled = map[string]bool{
	"$schema": true, "$id": true, "id": true, "$comment": true, "title": true, "description": true,
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "default": true, "examples": true, "example": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "minProperties": true, "maxProperties": true,
	"definitions": true, "$defs": true, "nullable": true, "allOf": true, "$ref": true,
	"readOnly": true, "writeOnly": true, "deprecated": true,
}

// Keywords the API server cannot check; Helm still does, on every reconcile.
var helmOnly = map[string]string{
	"anyOf":             "anyOf",
	"oneOf":             "oneOf",
	"not":               "not",
	"if":                "if/then/else",
	"then":              "",
	"else":              "",
	"patternProperties": "", // reported where it is mapped (shapes.go)
	"dependencies":      "dependencies",
	"dependentRequired": "dependentRequired",
	"dependentSchemas":  "dependentSchemas",
	"contains":          "contains",
	"propertyNames":     "propertyNames",
	"additionalItems":   "additionalItems",
}

// stringFormats are the string formats the API server knows (without
// dashes: "date-time" is "datetime"); others are dropped.
var stringFormats = map[string]bool{
	"bsonobjectid": true, "uri": true, "email": true, "hostname": true, "ipv4": true, "ipv6": true,
	"cidr": true, "mac": true, "uuid": true, "uuid3": true, "uuid4": true, "uuid5": true,
	"isbn": true, "isbn10": true, "isbn13": true, "creditcard": true, "ssn": true, "hexcolor": true,
	"rgbcolor": true, "byte": true, "password": true, "date": true, "duration": true, "datetime": true,
}

func formatSupported(typ, format string) bool {
	switch typ {
	case "string":
		return stringFormats[strings.ReplaceAll(format, "-", "")]
	case "integer":
		return format == "int32" || format == "int64"
	case "number":
		return format == "float" || format == "double"
	}
	return false
}
