// Package packaging holds what installs clawedge on a Debian system: the
// systemd unit (clawedge.service), the default config (config.yaml) and the
// .deb's control files and maintainer scripts (deb/). scripts/release.sh and
// scripts/deb.sh put them together; the tests here check them.
package packaging
