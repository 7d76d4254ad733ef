# Builds only llama.cpp's `llama-server` (common/, tools/server/, their vendored helpers) and links it
# against the ggml, llama and mtmd libraries that llama-cpp-python already compiled and installed, so
# that ggml and llama are not compiled a second time. Used as the root CMakeLists.txt of a copy of the
# llama.cpp tree vendored in the llama-cpp-python sdist (app/draftlight/engine/server/build.py copies it there).
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
    # libllama.so, or only its soname libllama.so.0 (as the frozen app carries it)
    file(GLOB _found "${LLAMA_LIB_DIR}/lib${name}${CMAKE_SHARED_LIBRARY_SUFFIX}*")
    list(SORT _found)
    list(LENGTH _found _count)
    if (_count EQUAL 0)
        message(FATAL_ERROR "lib${name} not found in ${LLAMA_LIB_DIR}")
    endif()
    list(GET _found 0 _library)
    add_library(${name} SHARED IMPORTED GLOBAL)
    set_target_properties(${name} PROPERTIES
        IMPORTED_LOCATION "${_library}"
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

# llama.cpp's RPC backend (one model split over machines: llama-server --rpc HOST:PORT,...), as a
# module: llama-server and rpc-server call ggml_backend_load_all(), which loads libggml-rpc.so
# from the executable's folder, so the installed ggml needs no rebuild for it.
add_library(ggml-rpc MODULE ggml/src/ggml-rpc/ggml-rpc.cpp ggml/src/ggml-rpc/transport.cpp)
target_compile_definitions(ggml-rpc PRIVATE GGML_BACKEND_DL GGML_BACKEND_BUILD GGML_BACKEND_SHARED)
target_include_directories(ggml-rpc PRIVATE ggml/src)
target_link_libraries(ggml-rpc PRIVATE ggml ggml-base Threads::Threads)
target_compile_features(ggml-rpc PRIVATE cxx_std_17)
set_target_properties(ggml-rpc PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin
                      BUILD_RPATH "${LLAMA_LIB_DIR}")

add_executable(rpc-server tools/rpc/rpc-server.cpp)
target_link_libraries(rpc-server PRIVATE ggml ggml-base)
target_compile_features(rpc-server PRIVATE cxx_std_17)
set_target_properties(rpc-server PROPERTIES BUILD_RPATH "${LLAMA_LIB_DIR}")
