#!/bin/sh
# read_temp.sh DEVICES_DIR indoor|outdoor: print a DS18B20's temperature in
# degrees Celsius. Only shell built-ins: the sandbox grants the shell and
# the devices folder, nothing else.
set -eu
dir=$1
case $2 in
indoor) want=1 ;;
outdoor) want=2 ;;
*) echo "unknown sensor $2" >&2; exit 2 ;;
esac
n=0
dev=
for d in "$dir"/28-*; do
	[ -e "$d/w1_slave" ] || continue
	n=$((n + 1))
	if [ "$n" -eq "$want" ]; then dev=$d; fi
done
if [ -z "$dev" ]; then
	echo "no DS18B20 probe #$want ($2) under $dir" >&2
	exit 1
fi
# w1_slave: "72 01 4b 46 7f ff 0e 10 57 : crc=57 YES" then "... t=23125".
{ read -r l1 && read -r l2; } <"$dev/w1_slave" || { echo "cannot read $dev/w1_slave" >&2; exit 1; }
case $l1 in
*YES) ;;
*) echo "CRC check failed on ${dev##*/}" >&2; exit 1 ;;
esac
t=${l2##*t=}
case $t in
'' | *[!0-9-]*) echo "no temperature in ${dev##*/}: $l2" >&2; exit 1 ;;
esac
sign=
case $t in -*) sign=-; t=${t#-} ;; esac
printf '%s%d.%03d\n' "$sign" $((t / 1000)) $((t % 1000))
