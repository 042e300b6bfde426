package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/update"
)

// bundleInput is one file going into a bundle and where its bytes are.
type bundleInput struct {
	file         update.File
	path         string
	offset, size int64 // a section of path (a partition of an image)
}

func (in bundleInput) open() (io.ReadCloser, error) {
	f, err := os.Open(in.path)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, in.offset, in.size), f}, nil
}

func newUpdateBundleCmd() *cobra.Command {
	var key, ver, board, root, image, bootDir, out string
	var epoch int64
	cmd := &cobra.Command{
		Use:   "bundle --key FILE --version V (--root FILE | --image IMG) [--boot-dir DIR] -o FILE",
		Short: "Write a signed update bundle from a slot's files (make update-bundle runs it)",
		Long: `Writes a signed clawedge-<version>.update: the root file system (--root, a
squashfs file, or --image: the squashfs in partition 2 of an SD image, cut to
its own length) and the files of --boot-dir (kernel, device trees, overlays/),
described by a manifest signed with the private key of clawedge update keygen.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			priv, err := update.ReadPrivateKey(key)
			if err != nil {
				return err
			}
			var ins []bundleInput
			switch {
			case root != "" && image == "":
				fi, err := os.Stat(root)
				if err != nil {
					return err
				}
				ins = append(ins, bundleInput{file: update.File{Name: "root.squashfs", Target: update.TargetRoot}, path: root, size: fi.Size()})
			case image != "" && root == "":
				off, size, err := imageRoot(image)
				if err != nil {
					return err
				}
				ins = append(ins, bundleInput{file: update.File{Name: "root.squashfs", Target: update.TargetRoot}, path: image, offset: off, size: size})
			default:
				return &exitError{code: 2, err: fmt.Errorf("give one of --root and --image")}
			}
			if bootDir != "" {
				boot, err := bootInputs(bootDir)
				if err != nil {
					return err
				}
				ins = append(ins, boot...)
			}
			m := update.Manifest{Format: update.FormatVersion, Version: ver, Epoch: epoch, Board: board}
			for i := range ins {
				rc, err := ins[i].open()
				if err != nil {
					return err
				}
				f, err := update.Describe(ins[i].file.Name, ins[i].file.Target, rc)
				rc.Close()
				if err != nil {
					return err
				}
				ins[i].file = f
				m.Files = append(m.Files, f)
			}
			byName := map[string]bundleInput{}
			for _, in := range ins {
				byName[in.file.Target+"/"+in.file.Name] = in
			}
			// Written beside and renamed (update.DirFS): a failed build
			// leaves no half bundle under the final name.
			pr, pw := io.Pipe()
			go func() {
				pw.CloseWithError(update.Write(pw, m, priv, func(f update.File) (io.ReadCloser, error) { return byName[f.Target+"/"+f.Name].open() }))
			}()
			err = update.DirFS(filepath.Dir(out)).WriteFile(filepath.Base(out), pr)
			pr.CloseWithError(err) // a failed write stops the writer
			if err != nil {
				return err
			}
			fi, _ := os.Stat(out)
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s for %s, %d files, %s\n", out, ver, board, len(m.Files), modelfiles.FormatBytes(fi.Size()))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "key", "", "the private key file (clawedge update keygen)")
	f.StringVar(&ver, "version", version, "the bundle's version")
	f.Int64Var(&epoch, "epoch", 0, "the build's commit time in Unix seconds (orders commit-id versions)")
	f.StringVar(&board, "board", "rpi-arm64", "the board the bundle is for")
	f.StringVar(&root, "root", "", "the slot's root file system (squashfs)")
	f.StringVar(&image, "image", "", "take the root file system from partition 2 of this SD image")
	f.StringVar(&bootDir, "boot-dir", "", "the slot's boot files (kernel, device trees, overlays/)")
	f.StringVarP(&out, "out", "o", "", "the bundle to write")
	cmd.MarkFlagRequired("key")
	cmd.MarkFlagRequired("out")
	return cmd
}

// bootInputs are the regular files of dir and of its folders one level down.
func bootInputs(dir string) ([]bundleInput, error) {
	var ins []bundleInput
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		ins = append(ins, bundleInput{file: update.File{Name: filepath.ToSlash(rel), Target: update.TargetBoot}, path: p, size: fi.Size()})
		return nil
	})
	sort.Slice(ins, func(i, j int) bool { return ins[i].file.Name < ins[j].file.Name })
	return ins, err
}

// imageRoot finds the root squashfs in an SD image: partition 2 of the MBR,
// cut to the squashfs's own length (its superblock's bytes_used, rounded up
// to 4 KiB as mksquashfs pads it).
func imageRoot(image string) (off, size int64, err error) {
	f, err := os.Open(image)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	mbr := make([]byte, 512)
	if _, err := io.ReadFull(f, mbr); err != nil || mbr[510] != 0x55 || mbr[511] != 0xaa {
		return 0, 0, fmt.Errorf("%s: no MBR partition table", image)
	}
	e := mbr[446+16 : 446+32] // the second entry
	off = int64(binary.LittleEndian.Uint32(e[8:])) * 512
	part := int64(binary.LittleEndian.Uint32(e[12:])) * 512
	sb := make([]byte, 96)
	if _, err := f.ReadAt(sb, off); err != nil || string(sb[:4]) != "hsqs" {
		return 0, 0, fmt.Errorf("%s: partition 2 (at byte %d) is not a squashfs", image, off)
	}
	used := int64(binary.LittleEndian.Uint64(sb[40:]))
	size = (used + 4095) &^ 4095
	if used <= 0 || size > part {
		return 0, 0, fmt.Errorf("%s: partition 2's squashfs says %d bytes, the partition has %d", image, used, part)
	}
	return off, size, nil
}
