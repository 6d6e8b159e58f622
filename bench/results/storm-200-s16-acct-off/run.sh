export STORM=200
export SINGLES="3"
export BRAKE_MIB="16"
export ACCOUNTING="off"
bash /mnt/proj/bench/guest/storm.sh
