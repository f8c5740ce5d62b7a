module probe

go 1.26.0

require github.com/shardedsink/shardedsink v0.0.0

replace github.com/shardedsink/shardedsink => ../../../..
