package zapsink_test

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/shardedsink/shardedsink/zapsink"
)

// A zap.Logger whose calls never wait for stdout; Close writes what is
// buffered.
func Example() {
	cfg := zap.NewProductionEncoderConfig()
	cfg.TimeKey = "" // for the example's fixed output
	core, err := zapsink.NewCore(zapcore.NewJSONEncoder(cfg), os.Stdout, zapcore.InfoLevel, nil)
	if err != nil {
		panic(err)
	}
	logger := zap.New(core).With(zap.String("svc", "cart"))
	logger.Info("served", zap.Int("status", 200))
	logger.Debug("not logged")
	if err := core.Close(context.Background()); err != nil {
		panic(err)
	}
	st := core.Stats()
	fmt.Println("written:", st.Written, "dropped:", st.Dropped)
	// Output:
	// {"level":"info","msg":"served","svc":"cart","status":200}
	// written: 1 dropped: 0
}
