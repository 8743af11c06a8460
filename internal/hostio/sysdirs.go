package hostio

import "path"

// systemDirs are the directories no fix changes, whoever names them: the
// roots of the system's trees and the directories many users share.
var systemDirs = map[string]bool{
	"/": true, "/etc": true, "/usr": true, "/usr/local": true, "/usr/bin": true, "/usr/sbin": true, "/usr/lib": true,
	"/usr/local/bin": true, "/bin": true, "/sbin": true, "/lib": true, "/lib64": true, "/boot": true, "/dev": true,
	"/proc": true, "/sys": true, "/run": true, "/var": true, "/var/lib": true, "/var/run": true, "/var/tmp": true,
	"/var/log": true, "/tmp": true, "/home": true, "/root": true, "/opt": true, "/srv": true, "/mnt": true,
	"/media": true, "/snap": true, "/etc/systemd": true, "/etc/systemd/system": true, "/lib/systemd": true,
	"/etc/ssh": true, "/etc/sudoers.d": true, "/etc/ssl": true, "/etc/pki": true, "/etc/kubernetes": true,
}

// SystemDir says whether p is a directory no fix changes: a root of the
// system's trees, or one many users share.
func SystemDir(p string) bool { return systemDirs[path.Clean(p)] }
