export STORM=200
export SINGLES="3"
export BRAKE_MIB="16"
export SBD_TIMING="1"
export SBD_ROOT_WEIGHT="1000"
bash /mnt/proj/bench/guest/storm.sh
