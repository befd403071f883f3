// Package envvar reads the settings of the project's commands (make bench,
// make chaos) from environment variables, with one error style: the
// variable, its value and what was wanted.
package envvar
