package grammar

import "testing"

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"call", `@gpio/write{pin="led";value=1}`},
		{"chain5", `@serial/open{port="/dev/ttyUSB0";baud=115200}->@serial/write{data="AT\r\n"}->@serial/read{timeout=2.5}->@data/parse{format='csv';cols=("t","v")}->@sys/log{msg=$prev.rows;level=no}`},
		{"parallel", `[@gpio/read{pin=17},@gpio/read{pin=27},@i2c/read{bus=1;addr=0x48;reg=0x00},@sys/uptime{}]->@sys/report{values=$prev.all}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.src)))
			for b.Loop() {
				if _, err := Parse(bc.src, ParseOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
