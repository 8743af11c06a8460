// Package runnerconfig decodes a GitLab Runner config.toml exactly as
// gitlab-runner v19.2.x does, so that doctor can
//
//   - report a syntax or type error with the very text the runner prints
//     (the runner wraps it as "decoding configuration file: <err>", see
//     LoadError), and
//   - find the keys the runner silently ignores, with
//     toml.MetaData.Undecoded(), and point at their lines with Locate.
//
// # Fidelity
//
// The runner decodes with toml.DecodeFile from github.com/BurntSushi/toml
// v1.6.0 into its own structs and never looks at MetaData.Undecoded(): an
// unknown or misspelt key is dropped without a word. Decode uses the same
// library and version on types that carry the same toml key names and the
// same Go kinds (string, int, int32, int64, float64, bool, pointers to them,
// time.Duration, time.Time, []string, maps, nested tables and arrays of
// tables) as the runner's structs in v19.2.0 to v19.2.2, which are identical
// for everything config.toml can reach. The two custom decoders the runner
// has on that path, StringOrArray (pull_policy) and the nfs volume, are
// mirrored with the same error texts.
//
// Three details follow from the library and hold for the runner too:
//
//   - key matching falls back to a case-insensitive comparison, so
//     "Executor" sets executor and is not undecoded;
//   - a type that decodes itself (the nfs volume) marks every key below it as
//     decoded;
//   - a free-form table stored into map[string]any (plugin_config,
//     nesting_config) marks only its direct keys as decoded, so keys of tables
//     nested inside plugin_config are reported as undecoded although the
//     plugin receives them.
//
// BurntSushi/toml names a struct's Go type in one error ("type mismatch for
// common.KubernetesConfig: expected table but found string"). To keep even
// that text identical the struct types are defined in internal packages that
// carry the runner's package and type names (common, cacheconfig, referees,
// runner, monitoring); this package exports them under shorter aliases.
//
// # Source
//
// Key names and kinds were read from gitlab-runner tag v19.2.1 (commit
// a470182f2a48e0e03ed11c3c4a2026b6597ecd26): common/config.go,
// helpers/docker/credentials.go, cache/cacheconfig/cacheconfig.go,
// referees/referees.go, referees/metrics.go, common/config/runner/monitoring.go
// and common/config/runner/monitoring/job_queuing_durations.go, and checked
// to be the same at v19.2.0 and v19.2.2.
package runnerconfig
