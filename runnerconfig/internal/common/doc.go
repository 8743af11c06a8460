// Package common defines the Go types that runnerconfig decodes config.toml
// into. They mirror, key for key and kind for kind, the structs of
// gitlab-runner v19.2.x (package common of gitlab.com/gitlab-org/gitlab-runner,
// plus the few types it pulls in from other packages, which live in the
// sibling packages cacheconfig, referees, runner and runner/monitoring).
//
// The package and struct type names are those of gitlab-runner on purpose:
// BurntSushi/toml puts a struct's Go type name in one of its errors
// ("type mismatch for common.KubernetesConfig: expected table but found
// string"), and doctor must print the runner's exact text. Field names and
// documentation are our own. Only decoding matters here: there are no
// encoding options (omitempty) and no behaviour beyond decoding.
//
// Callers outside runnerconfig use these types through the aliases exported
// by package runnerconfig.
package common
