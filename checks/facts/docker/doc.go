// Package docker is what a Docker runner's host says of its daemon, as a
// fact (DaemonFact): the address the runner dials (host, DOCKER_HOST or
// the default socket), the socket file and who may use it, and the
// daemon's /_ping and /version answers. docker-socket judges it;
// helper-image reads the daemon's architecture from it.
package docker
