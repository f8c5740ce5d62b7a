//go:build zenq

package zenq

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"

	upstream "github.com/alphadose/zenq/v2"
)

// slot mirrors zenq v2.8.4's unexported slot[T]:
//
//	slot[T any] struct {
//		writeParker *ThreadParker[T]
//		atomic.Uint32
//		item T
//	}
//
// Fields of the same sizes and alignments in the same order give the same
// layout, so item sits at the same offset. slotsOf checks the size.
type slot[T any] struct {
	writeParker unsafe.Pointer
	state       atomic.Uint32
	item        T
}

// slotsOf finds zenq's slot array inside q: metaQ.contents points at slot 0,
// metaQ.strideLength is the size of a slot and metaQ.indexMask is the number
// of slots minus one. These fields are unexported and never change after
// zenq.New returns, which happened before this call on this goroutine. It
// panics if the fields are missing or disagree with [slot], which means that
// the zenq module is not v2.8.4.
func slotsOf[T any](q *upstream.ZenQ[T]) slotArray[T] {
	typ := reflect.TypeFor[upstream.ZenQ[T]]()
	base := unsafe.Pointer(q)
	contents := *(*unsafe.Pointer)(unsafe.Add(base, fieldOffset(typ, "contents", reflect.UnsafePointer)))
	stride := *(*uint16)(unsafe.Add(base, fieldOffset(typ, "strideLength", reflect.Uint16)))
	mask := *(*uint16)(unsafe.Add(base, fieldOffset(typ, "indexMask", reflect.Uint16)))
	if uintptr(stride) != unsafe.Sizeof(slot[T]{}) || contents == nil || uint32(mask)&(uint32(mask)+1) != 0 {
		panic(fmt.Sprintf("zenq: unexpected zenq internals (stride %d, want %d; mask %#x): the adapter needs github.com/alphadose/zenq/v2 v2.8.4",
			stride, unsafe.Sizeof(slot[T]{}), mask))
	}
	return slotArray[T]{base: contents, stride: uintptr(stride), mask: uint64(mask)}
}

// fieldOffset returns the offset in typ of the (possibly promoted) field
// name, and panics unless it exists with the given kind.
func fieldOffset(typ reflect.Type, name string, kind reflect.Kind) uintptr {
	f, ok := typ.FieldByName(name)
	if !ok || f.Type.Kind() != kind {
		panic(fmt.Sprintf("zenq: zenq.ZenQ has no %s field of kind %v: the adapter needs github.com/alphadose/zenq/v2 v2.8.4", name, kind))
	}
	var off uintptr
	t := typ
	for _, i := range f.Index {
		sf := t.Field(i)
		off += sf.Offset
		t = sf.Type
	}
	return off
}
