{
  "targets": [
    {
      "target_name": "sessionbrake",
      "sources": ["native/unity/addon-all.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++14", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fexceptions"]
    },
    {
      "target_name": "sb-exec-gate",
      "type": "executable",
      "sources": ["native/gate/exec_gate.cc"],
      "cflags_cc!": ["-std=gnu++14", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Werror"]
    }
  ]
}
