package gguf

import "fmt"

// TensorType is a ggml tensor data type (enum ggml_type): how the elements of
// a tensor are stored.
type TensorType uint32

// The tensor types a GGUF file may use. Gaps (4, 5, 31-33, 36-38) are types
// ggml removed; files using them are rejected.
const (
	F32     TensorType = 0
	F16     TensorType = 1
	Q4_0    TensorType = 2
	Q4_1    TensorType = 3
	Q5_0    TensorType = 6
	Q5_1    TensorType = 7
	Q8_0    TensorType = 8
	Q8_1    TensorType = 9
	Q2_K    TensorType = 10
	Q3_K    TensorType = 11
	Q4_K    TensorType = 12
	Q5_K    TensorType = 13
	Q6_K    TensorType = 14
	Q8_K    TensorType = 15
	IQ2_XXS TensorType = 16
	IQ2_XS  TensorType = 17
	IQ3_XXS TensorType = 18
	IQ1_S   TensorType = 19
	IQ4_NL  TensorType = 20
	IQ3_S   TensorType = 21
	IQ2_S   TensorType = 22
	IQ4_XS  TensorType = 23
	I8      TensorType = 24
	I16     TensorType = 25
	I32     TensorType = 26
	I64     TensorType = 27
	F64     TensorType = 28
	IQ1_M   TensorType = 29
	BF16    TensorType = 30
	TQ1_0   TensorType = 34
	TQ2_0   TensorType = 35
	MXFP4   TensorType = 39
	NVFP4   TensorType = 40
	Q1_0    TensorType = 41
	Q2_0    TensorType = 42
)

// typeInfo is the storage layout of a tensor type: elements per block and
// bytes per block.
type typeInfo struct {
	name  string
	block uint64
	size  uint64
}

var tensorTypes = map[TensorType]typeInfo{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2},
	Q4_0: {"Q4_0", 32, 18}, Q4_1: {"Q4_1", 32, 20},
	Q5_0: {"Q5_0", 32, 22}, Q5_1: {"Q5_1", 32, 24},
	Q8_0: {"Q8_0", 32, 34}, Q8_1: {"Q8_1", 32, 36},
	Q2_K: {"Q2_K", 256, 84}, Q3_K: {"Q3_K", 256, 110}, Q4_K: {"Q4_K", 256, 144},
	Q5_K: {"Q5_K", 256, 176}, Q6_K: {"Q6_K", 256, 210}, Q8_K: {"Q8_K", 256, 292},
	IQ2_XXS: {"IQ2_XXS", 256, 66}, IQ2_XS: {"IQ2_XS", 256, 74}, IQ3_XXS: {"IQ3_XXS", 256, 98},
	IQ1_S: {"IQ1_S", 256, 50}, IQ4_NL: {"IQ4_NL", 32, 18}, IQ3_S: {"IQ3_S", 256, 110},
	IQ2_S: {"IQ2_S", 256, 82}, IQ4_XS: {"IQ4_XS", 256, 136},
	I8: {"I8", 1, 1}, I16: {"I16", 1, 2}, I32: {"I32", 1, 4}, I64: {"I64", 1, 8},
	F64: {"F64", 1, 8}, IQ1_M: {"IQ1_M", 256, 56}, BF16: {"BF16", 1, 2},
	TQ1_0: {"TQ1_0", 256, 54}, TQ2_0: {"TQ2_0", 256, 66},
	MXFP4: {"MXFP4", 32, 17}, NVFP4: {"NVFP4", 64, 36},
	Q1_0: {"Q1_0", 128, 18}, Q2_0: {"Q2_0", 64, 18},
}

// Known reports whether t is a tensor type this package knows the layout of.
func (t TensorType) Known() bool { _, ok := tensorTypes[t]; return ok }

// BlockSize is the number of elements stored together in one block (1 for
// plain types like F16, 32 for Q8_0, 256 for the K-quants); 0 if unknown.
func (t TensorType) BlockSize() int { return int(tensorTypes[t].block) }

// BlockBytes is the size of one block in bytes; 0 if unknown.
func (t TensorType) BlockBytes() int { return int(tensorTypes[t].size) }

func (t TensorType) String() string {
	if ti, ok := tensorTypes[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("TensorType(%d)", uint32(t))
}

// ParseTensorType is the inverse of String, case-insensitive ("q8_0" works).
func ParseTensorType(s string) (TensorType, bool) {
	for t, ti := range tensorTypes {
		if equalFold(ti.name, s) {
			return t, true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// FileType is general.file_type (enum llama_ftype): the quantization recipe the
// file was made with, which names it better than any one tensor type does
// (Q4_K_M mixes Q4_K and Q6_K tensors).
type FileType uint32

var fileTypes = map[FileType]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
	37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0", 41: "Q2_0",
}

// File types the writer side of this project produces.
const (
	FileTypeF32  FileType = 0
	FileTypeF16  FileType = 1
	FileTypeQ8_0 FileType = 7
)

func (f FileType) String() string {
	if s, ok := fileTypes[f]; ok {
		return s
	}
	return fmt.Sprintf("FileType(%d)", uint32(f))
}
