export STORM=200
export SINGLES="3"
export BRAKE_MIB="16"
bash /mnt/proj/bench/guest/storm.sh
