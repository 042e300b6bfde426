package disk

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The file systems are made by the standard tools, run without root: the
// image is assembled from files, never from mounted loop devices.

// FATFile is one file for the boot partition: Src on this machine, Dst its
// path on the FAT ("overlays/uart1.dtbo").
type FATFile struct{ Src, Dst string }

// MakeFAT writes a FAT32 file system of size bytes labelled label to out and
// copies files into it with mtools. Directories are made as needed.
func MakeFAT(out string, size int64, label string, files []FATFile) error {
	os.Remove(out)
	// mkfs.vfat -C takes the size in KiB. -F 32: the Pi firmware reads FAT16
	// and FAT32; FAT32 is what Raspberry Pi Imager and OS use.
	if err := run("mkfs.vfat", "-F", "32", "-n", label, "-C", out, strconv.FormatInt(size/1024, 10)); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, f := range files {
		for d := filepath.Dir(f.Dst); d != "." && d != "/"; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted) // parents first
	for _, d := range sorted {
		if err := run("mmd", "-i", out, "::"+d); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := run("mcopy", "-o", "-i", out, f.Src, "::"+f.Dst); err != nil {
			return err
		}
	}
	return nil
}

// MakeSquashFS packs dir into a squashfs image at out, every file owned by
// root. gzip, because every kernel with squashfs has it and it decompresses
// fastest on a Pi 3.
func MakeSquashFS(dir, out string) error {
	os.Remove(out)
	return run("mksquashfs", dir, out, "-noappend", "-all-root", "-comp", "gzip", "-quiet", "-no-progress")
}

// MakeExt4 makes an ext4 file system of size bytes at out with the contents
// of dir (owned by root). It keeps the journal: /perm holds the store, which
// must survive a power cut.
func MakeExt4(out string, size int64, label, dir string) error {
	os.Remove(out)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	f.Close()
	args := []string{"-q", "-F", "-t", "ext4", "-L", label, "-E", "root_owner=0:0", "-m", "0"}
	if dir != "" {
		args = append(args, "-d", dir)
	}
	return run("mkfs.ext4", append(args, out)...)
}

// ListFAT lists the files of the FAT file system at offset bytes into image
// (mtools' mdir -/ -b: one path per line), sorted.
func ListFAT(image string, offset int64) ([]string, error) {
	out, err := output("mdir", "-i", fmt.Sprintf("%s@@%d", image, offset), "-/", "-b", "::/")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			files = append(files, strings.TrimPrefix(l, "::/"))
		}
	}
	sort.Strings(files)
	return files, nil
}

// ReadFAT returns one file of the FAT file system at offset bytes into image.
func ReadFAT(image string, offset int64, name string) ([]byte, error) {
	out, err := output("mtype", "-i", fmt.Sprintf("%s@@%d", image, offset), "::"+name)
	return []byte(out), err
}

// WriteFAT writes body as file name on the FAT file system at offset bytes
// into image, replacing what was there: what a person does from a PC.
func WriteFAT(image string, offset int64, name string, body []byte) error {
	tmp, err := os.CreateTemp("", "fat")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return err
	}
	tmp.Close()
	return run("mcopy", "-o", "-i", fmt.Sprintf("%s@@%d", image, offset), tmp.Name(), "::"+name)
}

func run(name string, args ...string) error {
	_, err := output(name, args...)
	return err
}

func output(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// mtools refuses images whose geometry it does not like unless told not to check.
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
