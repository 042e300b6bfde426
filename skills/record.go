package skills

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

const recordFormat = "clawedge-skill-install/1"

// record is RecordFile: what Install put in the folder. For an unsigned
// skill its file list is what later loads compare against; for a signed one
// the signature is checked again as well.
type record struct {
	Format    string    `json:"format"`
	Name      string    `json:"name"`
	Source    string    `json:"source"`              // the folder, archive or URL installed from
	SignedBy  string    `json:"signed_by,omitempty"` // "" when installed unsigned
	Granted   bool      `json:"granted,omitempty"`   // the owner allowed its tools at install
	Installed time.Time `json:"installed"`
	Files     []File    `json:"files"`
}

func writeRecord(dir string, r record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'), 0o644)
}

func readRecord(dir string) (record, error) {
	var r record
	b, err := readSmall(filepath.Join(dir, RecordFile), 1<<20)
	if err != nil {
		if os.IsNotExist(err) {
			return r, fmt.Errorf("no %s: the folder was not installed with `clawedge skill install`", RecordFile)
		}
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Format != recordFormat {
		return r, fmt.Errorf("%s is not a %s record", RecordFile, recordFormat)
	}
	return r, nil
}
