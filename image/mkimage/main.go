// Command mkimage writes clawedge's Raspberry Pi SD card image: a FAT32 boot
// partition with the Pi firmware, the kernel and its device trees,
// config.txt and cmdline.txt; a read-only squashfs root with clawedge-init as
// PID 1 and clawedge; and an ext4 /perm partition for the store, the config
// and models. scripts/image.sh fetches the inputs and runs it:
//
//	go run ./image/mkimage -firmware DIR -kernel DIR -clawedge BIN -init BIN -config FILE -o out/clawedge-rpi.img
//
// The local-model runner slots in with -runner DIR (scripts/image-runtime.sh
// stages it): DIR/bin/* goes to /usr/bin, DIR/lib/* (libllama, libggml*) to
// /usr/lib/clawedge, and DIR/root/* (the C runtime from Debian's arm64
// packages, with the loader at /lib/ld-linux-aarch64.so.1) to the root as is.
// -model FILE puts a GGUF model in models/ on the boot partition, grown to
// hold it, for a board that has no network to pull one.
package main

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawedge/clawedge/image/disk"
)

// bootUsedMiB is what the boot partition needs besides a model: firmware,
// kernel and device trees (about 54 MiB) with room to spare.
const bootUsedMiB = 64

// DiskID is the MBR disk signature, so the root is root=PARTUUID=c1a3ed9e-02
// on an SD card and on USB alike.
const DiskID = 0xc1a3ed9e

type options struct {
	firmware, kernel, clawedge, init, config, runner, add, model, certs, out, work, version, pubkey string
	bootMiB, rootMiB, minPermMiB                                                                    int64
}

func main() {
	var o options
	flag.StringVar(&o.firmware, "firmware", "", "directory of the github.com/gokrazy/firmware module")
	flag.StringVar(&o.kernel, "kernel", "", "directory of the github.com/gokrazy/kernel.rpi module")
	flag.StringVar(&o.clawedge, "clawedge", "", "the linux/arm64 clawedge binary")
	flag.StringVar(&o.init, "init", "", "the linux/arm64 clawedge-init binary")
	flag.StringVar(&o.config, "config", "image/config.yaml", "the image's default config")
	flag.StringVar(&o.runner, "runner", "", "optional: the local-model runner's bin/ and lib/")
	flag.StringVar(&o.add, "add", "", "optional: a directory laid over the root file system as it is (the Wi-Fi modules and firmware, scripts/image-wifi.sh)")
	flag.StringVar(&o.model, "model", "", "optional: a GGUF model for models/ on the boot partition")
	flag.StringVar(&o.certs, "certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle for TLS (Telegram, remote models); skipped if missing")
	flag.StringVar(&o.out, "o", "out/clawedge-rpi.img", "the image to write")
	flag.StringVar(&o.work, "work", "", "scratch directory (default: a temporary one)")
	flag.StringVar(&o.version, "version", "dev", "version written to /etc/clawedge/version")
	flag.StringVar(&o.pubkey, "update-pubkey", "", "optional: the public key update bundles must be signed with (clawedge update keygen), as /etc/clawedge/update.pub")
	flag.Int64Var(&o.bootMiB, "boot-mib", 96, "boot partition size")
	flag.Int64Var(&o.rootMiB, "root-mib", 64, "root size, split into two slots (A/B updates)")
	flag.Int64Var(&o.minPermMiB, "perm-mib", 64, "least /perm size; the image is rounded up to a power of two")
	flag.Parse()
	for name, v := range map[string]string{"firmware": o.firmware, "kernel": o.kernel, "clawedge": o.clawedge, "init": o.init} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "mkimage: -%s is required\n", name)
			os.Exit(2)
		}
	}
	if err := build(o); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func build(o options) error {
	work := o.work
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "mkimage"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	bootMiB := o.bootMiB
	if o.model != "" {
		fi, err := os.Stat(o.model)
		if err != nil {
			return err
		}
		// The firmware and kernel take about 54 MiB: grow the partition only
		// for a model that does not fit beside them, since a different
		// boot size is a different layout (no in-place update across it).
		bootMiB = max(bootMiB, bootUsedMiB+(fi.Size()+disk.MiB-1)/disk.MiB)
	}
	layout, err := disk.Plan(disk.Sizes{Boot: bootMiB * disk.MiB, Root: o.rootMiB * disk.MiB, MinPerm: o.minPermMiB * disk.MiB, Slots: 2}, DiskID)
	if err != nil {
		return err
	}

	bootFiles, err := bootFiles(o, work, layout.Table.PartUUID(2))
	if err != nil {
		return err
	}
	boot := filepath.Join(work, "boot.fat")
	if err := disk.MakeFAT(boot, layout.Table.Partitions[0].Size, "CLAWEDGE", bootFiles); err != nil {
		return err
	}

	rootDir := filepath.Join(work, "root")
	if err := stageRoot(o, rootDir); err != nil {
		return err
	}
	root := filepath.Join(work, "root.squashfs")
	if err := disk.MakeSquashFS(rootDir, root); err != nil {
		return err
	}

	permDir := filepath.Join(work, "perm")
	if err := os.MkdirAll(filepath.Join(permDir, "clawedge", "data"), 0o750); err != nil {
		return err
	}
	perm := filepath.Join(work, "perm.ext4")
	permPart := layout.Table.Partitions[3]
	if err := disk.MakeExt4(perm, permPart.Size, "perm", permDir); err != nil {
		return err
	}

	layout.Files = []string{boot, root, "", perm} // slot B stays empty until an update

	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := layout.Write(o.out); err != nil {
		return err
	}
	rs, _ := os.Stat(root)
	fmt.Printf("%s: %d MiB (boot %d MiB, root slots A and B %d MiB each, A with a %.1f MiB squashfs, /perm %d MiB), root=PARTUUID=%s\n",
		o.out, layout.Size/disk.MiB, layout.Table.Partitions[0].Size/disk.MiB, layout.Table.Partitions[1].Size/disk.MiB,
		float64(rs.Size())/disk.MiB, permPart.Size/disk.MiB, layout.Table.PartUUID(2))
	return nil
}

// firmwareFiles are what Pi 3 (start, fixup, bootcode) and Pi 4 (start4,
// fixup4) boot with; the _x/_db/_cd variants (camera, debug, cut-down) are
// left out. A Pi 5 boots from its EEPROM and needs only kernel and DTB.
var firmwareFiles = []string{"bootcode.bin", "start.elf", "fixup.dat", "start4.elf", "fixup4.dat", "LICENSE.broadcom"}

// ConfigTxt is the firmware's config.txt.
const ConfigTxt = `# Raspberry Pi firmware settings for clawedge.
# https://www.raspberrypi.com/documentation/computers/config_txt.html
arm_64bit=1
kernel=vmlinuz
# The root slot that boots: the kernel, device trees, overlays and
# cmdline.txt are read from this folder. An update writes the other slot and
# tries it once through tryboot.txt (docs/update.md); it becomes the default
# here only when clawedge comes up healthy on it.
os_prefix=slot-a/
# The primary UART on header pins 8 (TX) and 10 (RX): /dev/ttyS0 on Pi 3, 4
# and Zero 2 W. It carries the kernel console and clawedge's serial console.
# (It also fixes the core clock, which the mini UART's baud rate depends on.)
enable_uart=1
# I2C on header pins 3 and 5, for the i2c tools (/dev/i2c-1).
dtparam=i2c_arm=on
disable_splash=1
gpu_mem=16
`

// ModelsReadme is models/README.txt on the boot partition.
const ModelsReadme = `Put a GGUF model file here (for example qwen2.5-0.5b-instruct-q4_k_m.gguf,
see "clawedge model list" in the README) and name it in clawedge.yaml:

  models:
    local: {path: /boot/models/qwen2.5-0.5b-instruct-q4_k_m.gguf}

The board reads this partition at /boot. A model pulled on the board with
"clawedge model pull" goes to /perm instead.
`

// WorkspaceReadme is workspace/README.txt on the boot partition.
const WorkspaceReadme = `Put the assistant's workspace files here from a PC; the board takes each one
over at its next boot when it changed here (the one it replaces is kept on the
board as NAME.before-boot):

  SOUL.md    who the assistant is, its tone
  USER.md    about its people
  MEMORY.md  long-term memory, one entry a line ("- text")

The board keeps and updates its own copies on /perm (clawedge memory list).
`

// CmdLine is the kernel command line of root slot A on partition
// partUUID. The last console= is /dev/console, where PID 1 and clawedge's
// logs go; clawedge.slot names the slot (the updater writes slot B's).
func CmdLine(partUUID string) string {
	return "console=tty1 console=ttyS0,115200 root=PARTUUID=" + partUUID +
		" rootfstype=squashfs ro rootwait init=/sbin/init panic=10 oops=panic clawedge.slot=a\n"
}

// SlotA is slot A's folder on the boot partition (config.txt's os_prefix).
const SlotA = "slot-a/"

// gzipFile writes src gzip'd to dst: the firmware loads a gzip'd arm64
// kernel as it is, a third of the size, so two slots' kernels fit.
func gzipFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func bootFiles(o options, work, rootPartUUID string) ([]disk.FATFile, error) {
	var files []disk.FATFile
	add := func(src, dst string) error {
		if _, err := os.Stat(src); err != nil {
			return err
		}
		files = append(files, disk.FATFile{Src: src, Dst: dst})
		return nil
	}
	for _, f := range firmwareFiles {
		if err := add(filepath.Join(o.firmware, f), f); err != nil {
			return nil, err
		}
	}
	kernel := filepath.Join(work, "vmlinuz.gz")
	if err := gzipFile(filepath.Join(o.kernel, "vmlinuz"), kernel); err != nil {
		return nil, err
	}
	add(kernel, SlotA+"vmlinuz")
	dtbs, _ := filepath.Glob(filepath.Join(o.kernel, "*.dtb"))
	if len(dtbs) == 0 {
		return nil, fmt.Errorf("no device trees in %s", o.kernel)
	}
	overlays, _ := filepath.Glob(filepath.Join(o.kernel, "overlays", "*"))
	for _, p := range append(dtbs, overlays...) {
		rel, _ := filepath.Rel(o.kernel, p)
		add(p, SlotA+filepath.ToSlash(rel))
	}
	add(filepath.Join(o.kernel, "LICENSE.linux"), "LICENSE.linux")
	for name, body := range map[string]string{"config.txt": ConfigTxt, SlotA + "cmdline.txt": CmdLine(rootPartUUID)} {
		p := filepath.Join(work, filepath.Base(name))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return nil, err
		}
		add(p, name)
	}
	// The default config, for people to copy to clawedge.yaml and edit.
	if err := add(o.config, "clawedge.yaml.example"); err != nil {
		return nil, err
	}
	// models/ is where a person puts a model from a PC; the note says so.
	note := filepath.Join(work, "models-readme.txt")
	if err := os.WriteFile(note, []byte(ModelsReadme), 0o644); err != nil {
		return nil, err
	}
	add(note, "models/README.txt")
	// workspace/ is where a person puts SOUL.md, USER.md, MEMORY.md
	// (cmd/clawedge-init takes them over at boot); the note says so.
	wsNote := filepath.Join(work, "workspace-readme.txt")
	if err := os.WriteFile(wsNote, []byte(WorkspaceReadme), 0o644); err != nil {
		return nil, err
	}
	add(wsNote, "workspace/README.txt")
	if o.model != "" {
		if err := add(o.model, "models/"+filepath.Base(o.model)); err != nil {
			return nil, err
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Dst < files[j].Dst })
	return files, nil
}

// stageRoot lays out the root file system in dir.
func stageRoot(o options, dir string) error {
	os.RemoveAll(dir)
	for _, d := range []string{"proc", "sys", "dev", "tmp", "run", "perm", "boot", "sbin", "usr/bin", "usr/lib/clawedge", "etc/clawedge", "etc/ssl/certs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	copies := map[string]string{o.init: "sbin/init", o.clawedge: "usr/bin/clawedge", o.config: "etc/clawedge/config.yaml"}
	if _, err := os.Stat(o.certs); err == nil {
		copies[o.certs] = "etc/ssl/certs/ca-certificates.crt"
	}
	for src, dst := range copies {
		if err := copyFile(src, filepath.Join(dir, dst)); err != nil {
			return err
		}
	}
	if o.runner != "" {
		if err := copyTree(filepath.Join(o.runner, "bin"), filepath.Join(dir, "usr/bin")); err != nil {
			return err
		}
		if err := copyTree(filepath.Join(o.runner, "lib"), filepath.Join(dir, "usr/lib/clawedge")); err != nil {
			return err
		}
		if err := copyTree(filepath.Join(o.runner, "root"), dir); err != nil {
			return err
		}
	}
	if o.add != "" {
		if err := copyTree(o.add, dir); err != nil {
			return err
		}
	}
	texts := map[string]string{
		"etc/clawedge/version": o.version + "\n",
		// Update bundles name the board they are for (docs/update.md).
		"etc/clawedge/board": "rpi-arm64\n",
		"etc/hostname":       "clawedge\n",
		// clawedge runs as clawedge (cmd/clawedge-init/user.go), not root.
		"etc/passwd":        "root:x:0:0:root:/perm/clawedge:/bin/false\nclawedge:x:1000:1000:clawedge:/perm/clawedge:/bin/false\n",
		"etc/group":         "root:x:0:\nclawedge:x:1000:\n",
		"etc/hosts":         "127.0.0.1\tlocalhost clawedge\n::1\tlocalhost\n",
		"etc/nsswitch.conf": "hosts: files dns\n",
	}
	if o.pubkey != "" {
		key, err := os.ReadFile(o.pubkey)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(string(key), "ed25519:") {
			return fmt.Errorf("%s: not an update public key (want the .pub line of clawedge update keygen)", o.pubkey)
		}
		texts["etc/clawedge/update.pub"] = string(key)
	}
	for name, body := range texts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	// DHCP writes the name servers at run time; the root is read-only.
	return os.Symlink("../run/resolv.conf", filepath.Join(dir, "etc/resolv.conf"))
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

func copyTree(src, dst string) error {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	}
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case fi.IsDir():
			return os.MkdirAll(target, 0o755)
		case fi.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		}
		return copyFile(p, target)
	})
}
