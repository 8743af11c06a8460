// Package fixcode builds the code a fix prints as typed values and renders
// them with one encoder per language, so that no value from a host, a
// config file or a server can become syntax.
//
// A fix runs as root in an operator's shell and as an administrator in the
// cluster. It is built the way a compiler emits code, never by formatting
// host text into a template:
//
//   - Shell: a Script is lines of commands; a Cmd is argument Words and
//     environment assignments; a Word is data (quoted by Quote), a
//     reference to a variable ($NAME, a name checked here), or the output
//     of a Cmd ("$(...)"). A document (a manifest, a drop-in, a TOML
//     fragment) reaches a command's standard input as a heredoc whose
//     delimiter is chosen so that no line of the document is it.
//   - systemd: a DropIn is sections of keys and values; a value is quoted
//     and C-escaped as systemd's extract_first_word(EXTRACT_CUNESCAPE|
//     EXTRACT_UNQUOTE) reads it back (src/core/load-fragment.c,
//     config_parse_environ, systemd v252), % doubled (a specifier).
//   - TOML: keys and values encoded by BurntSushi/toml, the runner's own
//     TOML library.
//   - Kubernetes: typed k8s.io/api objects marshalled by sigs.k8s.io/yaml.
//
// Constant code (doctor's own commands, catalog fixes that read shell
// variables) enters through Raw, whose parameter type is unexported: a
// string constant converts to it, a string variable does not compile, so
// no host value can reach a block except as data.
//
// Every encoder refuses what it cannot carry (a NUL in a shell word, text
// that is not UTF-8 in a drop-in, TOML or a manifest) and any value that
// looks like a secret (a fix names files, never their contents): the
// caller prints no block then, and says why. Non-printable characters
// (controls, bidi and other format characters) are written as escapes of
// the language, never raw, so that what a terminal shows is what runs.
package fixcode
