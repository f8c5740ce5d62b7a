package mpmc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardedsink/shardedsink/mpmc"
)

func TestTheErrorsSayWhatWentWrongWithThePackageName(t *testing.T) {
	for err, msg := range map[error]string{
		mpmc.ErrClosed: "mpmc: channel is closed",
		mpmc.ErrFull:   "mpmc: channel is full",
		mpmc.ErrEmpty:  "mpmc: channel is empty",
	} {
		require.Equal(t, msg, err.Error())
		require.True(t, strings.HasPrefix(err.Error(), "mpmc: "))
		require.ErrorIs(t, fmt.Errorf("sending job 7: %w", err), err, "they wrap")
	}
	require.False(t, errors.Is(mpmc.ErrFull, mpmc.ErrClosed))
	require.False(t, errors.Is(mpmc.ErrEmpty, mpmc.ErrClosed))
}
