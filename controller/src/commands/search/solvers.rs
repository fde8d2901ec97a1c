//! MIOpen's convolution solvers as its log names them (`SolverDbId`), and the variables that
//! switch each off: its own (`MIOPEN_DECLARE_ENV_VAR_BOOL` in its source file, named in each
//! entry's comment), and its family's (`MIOPEN_DEBUG_CONV_<FAMILY>`, checked by each finder's
//! `IsEnabled` in `src/conv/solver_finders.cpp`). A name not listed falls back to its family by
//! its name's shape. GEMM solvers and `fft` have no variable of their own.

/// (solver, its own variables), by the exact name MIOpen logs (`SolverDbId`). A solver renamed
/// across versions lists every variable it has had (rocm-libraries' `ConvOclBwdWrW53` is a HIP
/// port switched off by `..._HIP_WRW53`): all are set, and the kept file keeps those the pass
/// needs. Read in MIOpen's source (ROCm/MIOpen develop 2d1fd997a, = ROCm 6.3; ROCm/rocm-libraries
/// `projects/miopen`), each solver file's `MIOPEN_DECLARE_ENV_VAR_BOOL`.
const OWN: &[(&str, &[&str])] = &[
    // MIOpen conv_asm_3x3u.cpp
    ("ConvAsm3x3U", &["MIOPEN_DEBUG_CONV_DIRECT_ASM_3X3U"]),
    // MIOpen conv_asm_1x1u.cpp
    ("ConvAsm1x1U", &["MIOPEN_DEBUG_CONV_DIRECT_ASM_1X1U"]),
    // MIOpen conv_asm_1x1u_stride2.cpp
    ("ConvAsm1x1UV2", &["MIOPEN_DEBUG_CONV_DIRECT_ASM_1X1UV2"]),
    // MIOpen conv_asm_5x10u2v2f1.cpp
    (
        "ConvAsm5x10u2v2f1",
        &["MIOPEN_DEBUG_CONV_DIRECT_ASM_5X10U2V2"],
    ),
    // MIOpen conv_asm_5x10u2v2b1.cpp
    (
        "ConvAsm5x10u2v2b1",
        &["MIOPEN_DEBUG_CONV_DIRECT_ASM_5X10U2V2"],
    ),
    // MIOpen conv_asm_7x7c3h224w224k64u2v2p3q3f1.cpp
    (
        "ConvAsm7x7c3h224w224k64u2v2p3q3f1",
        &["MIOPEN_DEBUG_CONV_DIRECT_ASM_7X7C3H224W224"],
    ),
    // MIOpen conv_asm_dir_BwdWrW3x3.cpp
    ("ConvAsmBwdWrW3x3", &["MIOPEN_DEBUG_CONV_DIRECT_ASM_WRW3X3"]),
    // MIOpen conv_asm_dir_BwdWrW1x1.cpp
    ("ConvAsmBwdWrW1x1", &["MIOPEN_DEBUG_CONV_DIRECT_ASM_WRW1X1"]),
    // MIOpen conv_ocl_dir2D11x11.cpp
    (
        "ConvOclDirectFwd11x11",
        &["MIOPEN_DEBUG_CONV_DIRECT_OCL_FWD11X11"],
    ),
    // MIOpen conv_ocl_dir2Dfwdgen.cpp
    (
        "ConvOclDirectFwdGen",
        &["MIOPEN_DEBUG_CONV_DIRECT_OCL_FWDGEN"],
    ),
    // MIOpen conv_ocl_dir2Dfwd.cpp
    ("ConvOclDirectFwd", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_FWD"]),
    // MIOpen conv_ocl_dir2Dfwd1x1.cpp
    (
        "ConvOclDirectFwd1x1",
        &["MIOPEN_DEBUG_CONV_DIRECT_OCL_FWD1X1"],
    ),
    // MIOpen conv_ocl_dir2D_bwdWrW_2.cpp
    ("ConvOclBwdWrW2<1>", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"]),
    // MIOpen conv_ocl_dir2D_bwdWrW_2.cpp
    ("ConvOclBwdWrW2<2>", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"]),
    // MIOpen conv_ocl_dir2D_bwdWrW_2.cpp
    ("ConvOclBwdWrW2<4>", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"]),
    // MIOpen conv_ocl_dir2D_bwdWrW_2.cpp
    ("ConvOclBwdWrW2<8>", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"]),
    // MIOpen conv_ocl_dir2D_bwdWrW_2.cpp
    ("ConvOclBwdWrW2<16>", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"]),
    // MIOpen conv_ocl_dir2D_bwdWrW_2.cpp
    (
        "ConvOclBwdWrW2NonTunable",
        &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"],
    ),
    // MIOpen conv_hip_dir2D_bwdWrW_53.cpp
    (
        "ConvOclBwdWrW53",
        &[
            "MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53",
            "MIOPEN_DEBUG_CONV_DIRECT_HIP_WRW53",
        ],
    ),
    // MIOpen conv_ocl_dir2D_bwdWrW_1x1.cpp
    ("ConvOclBwdWrW1x1", &["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW1X1"]),
    // MIOpen conv_direct_naive_conv_fwd.cpp
    (
        "ConvDirectNaiveConvFwd",
        &["MIOPEN_DEBUG_CONV_DIRECT_NAIVE_CONV_FWD"],
    ),
    // MIOpen conv_direct_naive_conv_bwd.cpp
    (
        "ConvDirectNaiveConvBwd",
        &["MIOPEN_DEBUG_CONV_DIRECT_NAIVE_CONV_BWD"],
    ),
    // MIOpen conv_direct_naive_conv_wrw.cpp
    (
        "ConvDirectNaiveConvWrw",
        &["MIOPEN_DEBUG_CONV_DIRECT_NAIVE_CONV_WRW"],
    ),
    // rocm-libraries conv_hip_dir2D11x11.cpp
    (
        "ConvHipDirectFwd11x11",
        &["MIOPEN_DEBUG_CONV_DIRECT_HIP_FWD11X11"],
    ),
    // rocm-libraries conv_hip_dir2Dfwd1x1.cpp
    (
        "ConvHipDirectFwd1x1",
        &["MIOPEN_DEBUG_CONV_DIRECT_HIP_FWD1X1"],
    ),
    // rocm-libraries conv_hip_dir2D_bwdWrW_1x1.cpp
    (
        "ConvHipDirectWrW1x1",
        &["MIOPEN_DEBUG_CONV_DIRECT_HIP_WRW1X1"],
    ),
    // rocm-libraries conv_direct_depthwise_fwd_2d.cpp (file attribution unverified; conv_depthwise_direct.cpp also exists)
    (
        "ConvDepthwiseFwd2D",
        &["MIOPEN_DEBUG_CONV_DEPTHWISE_FWD_2D"],
    ),
    // MIOpen conv_bin_wino3x3U.cpp
    ("ConvBinWinograd3x3U", &["MIOPEN_DEBUG_AMD_WINOGRAD_3X3"]),
    // MIOpen conv_bin_winoRxS.cpp
    (
        "ConvBinWinogradRxS",
        &[
            "MIOPEN_DEBUG_AMD_WINOGRAD_RXS",
            "MIOPEN_DEBUG_AMD_WINOGRAD_RXS_FWD_BWD",
            "MIOPEN_DEBUG_AMD_WINOGRAD_RXS_WRW",
        ],
    ),
    // MIOpen conv_winoRxS.cpp
    (
        "ConvBinWinogradRxSf3x2",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F3X2"],
    ),
    // MIOpen conv_winoRxS.cpp
    (
        "ConvBinWinogradRxSf2x3",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3"],
    ),
    // MIOpen conv_winoRxS.cpp
    (
        "ConvBinWinogradRxSf2x3g1",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3_G1"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<3-2>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F3X2"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<3-3>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F3X3"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<3-4>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F3X4"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<3-5>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F3X5"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<3-6>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F3X6"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<7-2>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F7X2"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<7-3>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F7X3"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<7-2-1-1>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F7X2"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<7-3-1-1>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F7X3"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<1-1-7-2>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F7X2"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<1-1-7-3>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F7X3"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<5-3>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F5X3"],
    ),
    // MIOpen conv_multipass_wino3x3WrW.cpp
    (
        "ConvWinograd3x3MultipassWrW<5-4>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_MPASS_F5X4"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd<2-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_WINOGRAD_F2X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd<3-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_WINOGRAD_F3X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd<4-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_WINOGRAD_F4X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd<5-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_WINOGRAD_F5X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd<6-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_WINOGRAD_F6X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd_xdlops<2-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_XDLOPS_WINOGRAD_F2X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd_xdlops<3-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_XDLOPS_WINOGRAD_F3X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd_xdlops<4-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_XDLOPS_WINOGRAD_F4X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd_xdlops<5-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_XDLOPS_WINOGRAD_F5X3"],
    ),
    // MIOpen conv_MP_bidirectional_winograd.cpp
    (
        "ConvMPBidirectWinograd_xdlops<6-3>",
        &["MIOPEN_DEBUG_AMD_MP_BD_XDLOPS_WINOGRAD_F6X3"],
    ),
    // MIOpen conv_wino_fury_RxS.cpp
    (
        "ConvWinoFuryRxS<2-3>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_FURY_RXS_F2X3"],
    ),
    // rocm-libraries conv_wino_rage_RxS.cpp
    (
        "ConvWinoRageRxS<2-3>",
        &["MIOPEN_DEBUG_AMD_WINOGRAD_RAGE_RXS_F2X3"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_v4r1.cpp
    (
        "ConvHipImplicitGemmV4R1Fwd",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R1"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_v4r1.cpp
    (
        "ConvHipImplicitGemmV4R1WrW",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_WRW_V4R1"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_v4r4.cpp
    (
        "ConvHipImplicitGemmV4R4Fwd",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R4"],
    ),
    // MIOpen conv_hip_implicit_gemm_wrw_v4r4.cpp
    (
        "ConvHipImplicitGemmV4R4WrW",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_WRW_V4R4"],
    ),
    // MIOpen conv_hip_implicit_gemm_bwd_v1r1.cpp
    (
        "ConvHipImplicitGemmBwdDataV1R1",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V1R1"],
    ),
    // MIOpen conv_hip_implicit_gemm_bwd_v4r1.cpp
    (
        "ConvHipImplicitGemmBwdDataV4R1",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V4R1"],
    ),
    // MIOpen conv_hip_implicit_gemm_bwd_v1r1_xdlops.cpp
    (
        "ConvHipImplicitGemmBwdDataV1R1Xdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V1R1_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_bwd_v4r1_xdlops.cpp
    (
        "ConvHipImplicitGemmBwdDataV4R1Xdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_V4R1_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_v4r4_xdlops.cpp
    (
        "ConvHipImplicitGemmForwardV4R4Xdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R4_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_v4r4_xdlops_padded_gemm.cpp
    (
        "ConvHipImplicitGemmForwardV4R4Xdlops_Padded_Gemm",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R4_PADDED_GEMM_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_v4r5_xdlops.cpp
    (
        "ConvHipImplicitGemmForwardV4R5Xdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_V4R5_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_wrw_v4r4_xdlops.cpp
    (
        "ConvHipImplicitGemmWrwV4R4Xdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_WRW_V4R4_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_wrw_v4r4_xdlops_padded_gemm.cpp
    (
        "ConvHipImplicitGemmWrwV4R4Xdlops_Padded_Gemm",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_WRW_V4R4_PADDED_GEMM_XDLOPS"],
    ),
    // MIOpen conv_asm_implicit_gemm_v4r1_dynamic.cpp
    (
        "ConvAsmImplicitGemmV4R1DynamicFwd",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_FWD_V4R1"],
    ),
    // MIOpen conv_asm_implicit_gemm_v4r1_dynamic.cpp
    (
        "ConvAsmImplicitGemmV4R1DynamicFwd_1x1",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_FWD_V4R1_1X1"],
    ),
    // MIOpen conv_asm_implicit_gemm_bwd_v4r1_dynamic.cpp
    (
        "ConvAsmImplicitGemmV4R1DynamicBwd",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_BWD_V4R1"],
    ),
    // MIOpen conv_asm_implicit_gemm_wrw_v4r1_dynamic.cpp
    (
        "ConvAsmImplicitGemmV4R1DynamicWrw",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_WRW_V4R1"],
    ),
    // MIOpen conv_asm_implicit_gemm_gtc_fwd.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicFwdXdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_FWD_GTC_XDLOPS"],
    ),
    // MIOpen conv_asm_implicit_gemm_gtc_bwd.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicBwdXdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_BWD_GTC_XDLOPS"],
    ),
    // MIOpen conv_asm_implicit_gemm_wrw_gtc_dynamic_xdlops.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_WRW_GTC_XDLOPS"],
    ),
    // MIOpen conv_asm_implicit_gemm_gtc_fwd_nhwc.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicFwdXdlopsNHWC",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_FWD_GTC_XDLOPS_NHWC"],
    ),
    // MIOpen conv_asm_implicit_gemm_gtc_bwd_nhwc.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_BWD_GTC_XDLOPS_NHWC"],
    ),
    // MIOpen conv_asm_implicit_gemm_gtc_wrw_nhwc.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicWrwXdlopsNHWC",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_WRW_GTC_XDLOPS_NHWC"],
    ),
    // MIOpen conv_asm_implicit_gemm_gtc_fwd_nchwc.cpp
    (
        "ConvAsmImplicitGemmGTCDynamicFwdDlopsNCHWC",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_ASM_FWD_GTC_DLOPS_NCHWC"],
    ),
    // MIOpen conv_ck_igemm_fwd_v6r1_dlops_nchw.cpp
    (
        "ConvCkIgemmFwdV6r1DlopsNchw",
        &["MIOPEN_DEBUG_CONV_CK_IGEMM_FWD_V6R1_DLOPS_NCHW"],
    ),
    // MIOpen conv_mlir_igemm_fwd.cpp
    ("ConvMlirIgemmFwd", &["MIOPEN_DEBUG_CONV_MLIR_IGEMM_FWD"]),
    // MIOpen conv_mlir_igemm_bwd.cpp
    ("ConvMlirIgemmBwd", &["MIOPEN_DEBUG_CONV_MLIR_IGEMM_BWD"]),
    // MIOpen conv_mlir_igemm_wrw.cpp
    ("ConvMlirIgemmWrW", &["MIOPEN_DEBUG_CONV_MLIR_IGEMM_WRW"]),
    // MIOpen conv_mlir_igemm_fwd_xdlops.cpp
    (
        "ConvMlirIgemmFwdXdlops",
        &["MIOPEN_DEBUG_CONV_MLIR_IGEMM_FWD_XDLOPS"],
    ),
    // MIOpen conv_mlir_igemm_bwd_xdlops.cpp
    (
        "ConvMlirIgemmBwdXdlops",
        &["MIOPEN_DEBUG_CONV_MLIR_IGEMM_BWD_XDLOPS"],
    ),
    // MIOpen conv_mlir_igemm_wrw_xdlops.cpp
    (
        "ConvMlirIgemmWrWXdlops",
        &["MIOPEN_DEBUG_CONV_MLIR_IGEMM_WRW_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_fwd_xdlops.cpp
    (
        "ConvHipImplicitGemmFwdXdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_FWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_bwd_data_xdlops.cpp
    (
        "ConvHipImplicitGemmBwdXdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_BWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_grouped_fwd_xdlops.cpp
    (
        "ConvHipImplicitGemmGroupFwdXdlops",
        &["MIOPEN_DEBUG_GROUP_CONV_IMPLICIT_GEMM_HIP_FWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_grouped_bwd_xdlops.cpp
    (
        "ConvHipImplicitGemmGroupBwdXdlops",
        &["MIOPEN_DEBUG_CONV_IMPLICIT_GEMM_HIP_GROUP_BWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_grouped_wrw_xdlops.cpp
    (
        "ConvHipImplicitGemmGroupWrwXdlops",
        &["MIOPEN_DEBUG_GROUP_CONV_IMPLICIT_GEMM_HIP_WRW_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_3d_grouped_fwd_xdlops.cpp
    (
        "ConvHipImplicitGemm3DGroupFwdXdlops",
        &["MIOPEN_DEBUG_3D_CONV_IMPLICIT_GEMM_HIP_FWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_3d_grouped_bwd_xdlops.cpp
    (
        "ConvHipImplicitGemm3DGroupBwdXdlops",
        &["MIOPEN_DEBUG_3D_CONV_IMPLICIT_GEMM_HIP_BWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_3d_grouped_wrw_xdlops.cpp
    (
        "ConvHipImplicitGemm3DGroupWrwXdlops",
        &["MIOPEN_DEBUG_3D_CONV_IMPLICIT_GEMM_HIP_WRW_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_f16f8f16_fwd_xdlops.cpp
    (
        "ConvHipImplicitGemmF16F8F16FwdXdlops",
        &["MIOPEN_DEBUG_F16F8F16_CONV_IMPLICIT_GEMM_HIP_FWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_f16f8f16_bwd_xdlops.cpp
    (
        "ConvHipImplicitGemmF16F8F16BwdXdlops",
        &["MIOPEN_DEBUG_F16F8F16_CONV_IMPLICIT_GEMM_HIP_BWD_XDLOPS"],
    ),
    // MIOpen conv_hip_implicit_gemm_f16f8f16_wrw_xdlops.cpp
    (
        "ConvHipImplicitGemmF16F8F16WrwXdlops",
        &["MIOPEN_DEBUG_F16F8F16_CONV_IMPLICIT_GEMM_HIP_WRW_XDLOPS"],
    ),
    // rocm-libraries conv_hipconv.cpp
    ("ConvHipConv", &["MIOPEN_DEBUG_CONV_HIPCONV"]),
];

/// (name prefix, family variable), checked in order.
const FAMILY: &[(&str, &str)] = &[
    ("ConvHipImplicitGemm", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM"),
    ("ConvAsmImplicitGemm", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM"),
    ("ConvCk", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM"),
    ("ConvMlirIgemm", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM"),
    ("ConvHipConv", "MIOPEN_DEBUG_CONV_IMPLICIT_GEMM"),
    ("ConvBinWinograd", "MIOPEN_DEBUG_CONV_WINOGRAD"),
    ("ConvWinograd", "MIOPEN_DEBUG_CONV_WINOGRAD"),
    ("ConvWinoFury", "MIOPEN_DEBUG_CONV_WINOGRAD"),
    ("ConvWinoRage", "MIOPEN_DEBUG_CONV_WINOGRAD"),
    ("ConvMPBidirectWinograd", "MIOPEN_DEBUG_CONV_WINOGRAD"),
    ("ConvOcl", "MIOPEN_DEBUG_CONV_DIRECT"),
    ("ConvAsm", "MIOPEN_DEBUG_CONV_DIRECT"),
    ("ConvHipDirect", "MIOPEN_DEBUG_CONV_DIRECT"),
    ("ConvDepthwise", "MIOPEN_DEBUG_CONV_DIRECT"),
    ("ConvDirectNaive", "MIOPEN_DEBUG_CONV_DIRECT"),
    ("Gemm", "MIOPEN_DEBUG_CONV_GEMM"),
    ("fft", "MIOPEN_DEBUG_CONV_FFT"),
];

/// The variables that switch solver `name` off, where it has its own: by its exact name, else
/// (a template argument this table lacks, `ConvOclBwdWrW2<32>`) by its kin's.
pub fn variables_for(name: &str) -> Vec<String> {
    let base = |n: &str| n.split('<').next().unwrap_or(n).to_owned();
    let found = OWN.iter().find(|(n, _)| *n == name).or_else(|| {
        name.contains('<')
            .then(|| {
                OWN.iter()
                    .find(|(n, _)| n.contains('<') && base(n) == base(name))
            })
            .flatten()
    });
    found
        .map(|(_, v)| v.iter().map(|s| (*s).to_owned()).collect())
        .unwrap_or_default()
}

/// The family variable that switches solver `name` off with its kin.
pub fn family_for(name: &str) -> Option<String> {
    FAMILY
        .iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|(_, v)| (*v).to_owned())
}

/// Whether `word` is shaped like a solver's name (for reading the log).
pub fn is_solver(word: &str) -> bool {
    family_for(word).is_some()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "<>_-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templated_and_kin_solvers_share_their_variable_and_families_catch_the_rest() {
        for n in [
            "ConvOclBwdWrW2<1>",
            "ConvOclBwdWrW2<16>",
            "ConvOclBwdWrW2<32>",
            "ConvOclBwdWrW2NonTunable",
        ] {
            assert_eq!(
                variables_for(n),
                ["MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW2"],
                "{n}"
            );
        }
        assert_eq!(
            variables_for("ConvOclBwdWrW53"),
            [
                "MIOPEN_DEBUG_CONV_DIRECT_OCL_WRW53",
                "MIOPEN_DEBUG_CONV_DIRECT_HIP_WRW53"
            ]
        );
        // Exact names: ConvBinWinogradRxSf2x3g1 is not ConvBinWinogradRxSf2x3's.
        assert_eq!(
            variables_for("ConvBinWinogradRxSf2x3g1"),
            ["MIOPEN_DEBUG_AMD_WINOGRAD_RXS_F2X3_G1"]
        );
        // GEMM's solvers have no variable of their own: the family's.
        assert!(variables_for("GemmBwdRest").is_empty());
        assert_eq!(
            family_for("GemmBwdRest").as_deref(),
            Some("MIOPEN_DEBUG_CONV_GEMM")
        );
        // A solver this table does not know: its family by its name.
        assert!(variables_for("ConvOclSomethingNew").is_empty());
        assert_eq!(
            family_for("ConvOclSomethingNew").as_deref(),
            Some("MIOPEN_DEBUG_CONV_DIRECT")
        );
        assert!(is_solver("ConvOclBwdWrW2<4>") && !is_solver("Chosen"));
    }
}
