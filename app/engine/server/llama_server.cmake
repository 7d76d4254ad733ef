# Builds only llama.cpp's `llama-server` (common/, tools/server/, their vendored helpers) and links it
# against the ggml, llama and mtmd libraries that llama-cpp-python already compiled and installed, so
# that ggml and llama are not compiled a second time. Used as the root CMakeLists.txt of a copy of the
# llama.cpp tree vendored in the llama-cpp-python sdist (app/engine/server/build.py copies it there).
cmake_minimum_required(VERSION 3.14)
project("llama.cpp" C CXX)

set(LLAMA_VERSION_MAJOR 0)
set(LLAMA_VERSION_MINOR 5)
set(LLAMA_VERSION_PATCH 0)
set(LLAMA_VERSION_BASE "${LLAMA_VERSION_MAJOR}.${LLAMA_VERSION_MINOR}.${LLAMA_VERSION_PATCH}")
set(LLAMA_LIB_DIR "" CACHE PATH "the folder holding libllama.so, libggml*.so and libmtmd.so")
if (NOT EXISTS "${LLAMA_LIB_DIR}")
    message(FATAL_ERROR "LLAMA_LIB_DIR must name the installed llama_cpp/lib folder")
endif()
if (NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_SOURCE_DIR}/cmake/")
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(BUILD_SHARED_LIBS OFF)
set(LLAMA_BUILD_COMMON ON)
set(LLAMA_BUILD_UI OFF)
set(LLAMA_USE_PREBUILT_UI OFF)
set(LLAMA_OPENSSL OFF)
set(LLAMA_LLGUIDANCE OFF)
set(LLAMA_SUBPROCESS ON)
set(LLAMA_ALL_WARNINGS OFF)
set(LLAMA_TOOLS_INSTALL OFF)

include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/build-info.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/common.cmake)
include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/license.cmake)
set(LLAMA_BUILD_NUMBER ${BUILD_NUMBER})
set(LLAMA_BUILD_COMMIT ${BUILD_COMMIT})
find_package(Threads REQUIRED)

function(draftlight_imported name includes links)
    add_library(${name} SHARED IMPORTED GLOBAL)
    set_target_properties(${name} PROPERTIES
        IMPORTED_LOCATION "${LLAMA_LIB_DIR}/lib${name}${CMAKE_SHARED_LIBRARY_SUFFIX}"
        INTERFACE_INCLUDE_DIRECTORIES "${includes}"
        INTERFACE_LINK_LIBRARIES "${links}")
endfunction()
set(_root ${CMAKE_CURRENT_SOURCE_DIR})
draftlight_imported(ggml-base "${_root}/ggml/include" "")
draftlight_imported(ggml "${_root}/ggml/include" "ggml-base")
draftlight_imported(llama "${_root}/include" "ggml;ggml-base")
draftlight_imported(mtmd "${_root}/tools/mtmd" "llama;ggml;ggml-base")

add_subdirectory(vendor)
add_subdirectory(common)
add_subdirectory(tools/ui)
add_subdirectory(tools/server)
set_target_properties(llama-server PROPERTIES BUILD_RPATH "${LLAMA_LIB_DIR}")
