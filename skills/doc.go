// Package skills reads, signs, installs and loads skills in the Agent Skills
// format: a folder with a SKILL.md (YAML front matter with name and
// description, then instructions) and optional scripts/, references/ and
// assets/. clawedge's own extension, tools.yaml beside SKILL.md, declares
// script tools: typed specs whose programs run in the sandbox with exactly
// the paths, network and time they declare (tool.go).
//
// A folder is read once, as a bounded tree of regular files (tree.go: no
// symlinks, no special files, no control characters in names, limits on
// counts and sizes), and every later step works on that tree: the signature
// (sign.go) covers every file's path, size, mode and sha256; installing
// (install.go) copies the tree into a staging folder, verifies the copy, and
// renames it into place, so nothing is ever half installed; loading (load.go)
// verifies an installed folder again and names the file that changed.
//
// The package knows nothing of the config or the policy: trusted keys, the
// unsigned switch and the owner's confirmation come in as arguments.
package skills
