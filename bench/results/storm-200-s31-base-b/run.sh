export STORM=200
export SINGLES="3"
export BRAKE_MIB="16"
export SBD_TIMING="1"
export WARM_UP="off"
bash /mnt/proj/bench/guest/storm.sh
