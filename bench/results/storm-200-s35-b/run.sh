export STORM=200
export SINGLES="3"
export BRAKE_MIB="16"
export SBD_TIMING="1"
bash /mnt/proj/bench/guest/storm.sh
