package skills

// Bounds of a skill. A skill is instructions, a few scripts and small
// references; anything larger is a mistake or an attack on the board's
// storage and memory, and is refused before it is copied anywhere.
const (
	MaxFiles        = 256       // files in the folder, SKILL.md included
	MaxFileBytes    = 4 << 20   // one file
	MaxTotalBytes   = 16 << 20  // all files
	MaxDepth        = 8         // folders below the skill's own
	MaxSkillMDBytes = 256 << 10 // SKILL.md (the largest public ones are ~75 KiB)
	MaxFrontMatter  = 16 << 10  // the YAML between the --- lines
	MaxToolsYAML    = 64 << 10  // tools.yaml
	MaxTools        = 32        // script tools of one skill
	MaxPathBytes    = 255       // a file's path inside the folder
	// MaxArchiveBytes bounds a .tar.gz as downloaded and as unpacked.
	MaxArchiveBytes = MaxTotalBytes + 1<<20
)
