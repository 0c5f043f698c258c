"""Pinned upstream files and their sha256 (generated from the shared copies; do not edit by hand).

The hashes are of the bytes written into the data dir. The shared copies were checked to be
byte-identical to the repository blobs at the pinned commits; the MTSamples pages are stored
gzip-compressed in their repository, so their hashes are of the decompressed bodies.
"""

from __future__ import annotations

from budgetctx.eval.datasets._base import RemoteFile, Repository

__all__ = [
    "DEVARAJ",
    "LEVAL",
    "MTSAMPLES",
    "MTSAMPLES_DERIVED_SHA256",
    "MTSAMPLES_INDEX_SHA256",
    "MTSAMPLES_PAGES",
    "PUBMEDQA",
    "TSAR",
    "devaraj_files",
    "leval_file",
    "mtsamples_files",
    "pubmedqa_files",
    "tsar_files",
]

LEVAL = Repository(
    "OpenLMLab/LEval",
    "cd34b050269148aed75acbbe4a599873ad0f37e9",
    "GPL-3.0 (repository); the documents keep the terms of their source corpora",
)
PUBMEDQA = Repository(
    "pubmedqa/pubmedqa",
    "1cbae8e92f72f20c8d3747cbb3bf5bc53554d997",
    "MIT; contexts are PubMed abstracts",
)
TSAR = Repository(
    "feliperussi/tsar-2025-medical-writing-agent-cochrane",
    "f074ca5b9f38640a9e633e2197152e1687e2338e",
    "no license file; Cochrane abstracts (Wiley), research evaluation only, do not redistribute",
)
DEVARAJ = Repository(
    "AshOlogn/Paragraph-level-Simplification-of-Medical-Texts",
    "edf6504ea28b2458ec6b4c172482ad15387aeeef",
    "CC BY 4.0 (repository); the text is from Cochrane reviews",
)
MTSAMPLES = Repository(
    "terrah27/spider_mtsamples.com",
    "7794f006f0a38e1747596a07f9b55987d6add8fd",
    'no license; mtsamples.com pages are "for reference purpose only"; no redistribution',
)

# task -> (sha256, size) of LEval-data/Open-ended-tasks/<task>.jsonl
_LEVAL: dict[str, tuple[str, int]] = {
    "gov_report_summ": ("72ff9fc383afef70208e12598536fedb3c86341c6e6218cb2061caa049f3e0db", 421095),
    "meeting_summ": ("8ca74c777d7d22f0f1507f78cf3f1b50b7ae178328e7bf27758819ceb255eef7", 1410185),
    "news_summ": ("2b7c362acd2770b2517994e5b2d1be3ce98579b228f13cf4e529475fe4d5e79b", 370209),
    "paper_assistant": (
        "b2bdded86ee285f99f6371065014d47a22350718b68dd1e99839883d663380b1",
        1028259,
    ),
    "patent_summ": ("de9653f8f87653ac967bb1142efc4ccd92a72089811425633fd1209afce3e3e2", 410258),
    "review_summ": ("62f2a2bc13f0262dc27b8cd95763aacd37c920ac33777192f98406da1b7db7cd", 2035662),
    "tv_show_summ": ("937f83a14f824295a3dc75670f04847dc69825a2ade11cb80faa884c1758afdf", 458028),
}
# name -> (sha256, size) of data/<name>
_PUBMEDQA: dict[str, tuple[str, int]] = {
    "ori_pqal.json": ("8b3276be8942ebbd77f3ddcda12c1749bf0e490045a736fd8438ee40cf37a41d", 2584787),
    "test_ground_truth.json": (
        "939fe566f09017d13b1ca64d2ddfee0bc2374b366048152997669cccedc44d51",
        11414,
    ),
}
# review id -> (sha256, size) of data/original/<review id>.json
_TSAR: dict[str, tuple[str, int]] = {
    "CD000259.PUB4": ("bd9d6f00e5f4f4c49ad40dc9ca10e2426f2ef93bdc29a90118d22f0f78cabfa6", 12540),
    "CD001431.PUB6": ("2bb23438825044e1fb848c76c7321294b8d94b412e50968a104a8e2620288ab3", 10118),
    "CD002120.PUB4": ("d66a18bb843707249040cbe1140f8c4af8c68687801fa9b2f3b4748613531304", 10561),
    "CD002892.PUB6": ("fc5a25923dd83c7ce1ff0c867f28f75803607ce9d25acfe37171d269161eef21", 11448),
    "CD003218.PUB3": ("c89af1d577a86099d8218ca3be4c63324a165ea0fd3b5cfc5f0a8cdbbf40f339", 6867),
    "CD003331.PUB6": ("8f1bef242f275048d2e32af3c2cb36a1e8c6dcba8dc05825463e991fbe0f74ff", 10412),
    "CD003414.PUB4": ("d5418276c83c29f743386b0a740395022ffc0201612e212d98a8e1f019495f7b", 9876),
    "CD003437.PUB5": ("c322d9b3b12419b7cf6eaf7649aca37b6f56ab136c70746dfae8122cec2eb69c", 10170),
    "CD003962.PUB3": ("745d4dad005f8aca7c4d2453d6624b6c2c7c198cb875c56c86c151d290ae7c75", 9315),
    "CD004065.PUB4": ("e3051ad9dc1778b95909b1152a27012049bfea951aae8a51db43ac40d937ec93", 12417),
    "CD004762.PUB3": ("f096ec905ff7d941775c5e8cea1654dee3852c706039e127f6134b14d0805c0c", 11202),
    "CD006127.PUB3": ("80ae9c979c7ea40c12daeca8c4c91c1a28055a445ba7303c29604b611e8b015e", 9793),
    "CD006207.PUB6": ("2f7c8c78ffaeed1f0a3dc91148a312b106b7f7210f6dc9428311372f7e59ebf4", 14338),
    "CD006405.PUB4": ("ec55593e169688479190189dc0a930ba41a4b2226f92551aa2172a7ad383eeef", 10329),
    "CD006586.PUB5": ("44b283c7a81859664d527997bf44f4968bdf7f269dd2eba00630fbe645e591a8", 7907),
    "CD006606.PUB5": ("596c86f52e2e5b987ced9833001e8191d7f4c4edf6f6e4270e0f461906015003", 12378),
    "CD006913.PUB3": ("c5bd6029c926a0ad5df13e21f71f6f202b6e13f7728d886d7d62386ca79d7148", 11379),
    "CD007130.PUB5": ("24939393e563f49d546a632eac91208dc2fe153b198a5bdcf8303055ffbaa337", 9070),
    "CD007156.PUB3": ("3776dbac739eb7a1bf1c60ae68bc605851a4e1ff6383976de7fba2fb1dd7292a", 10357),
    "CD007374.PUB3": ("597e26b0b807c676513d2e89aa5ad41df22e7429c4270ae5129c18cdaeee6da8", 11333),
    "CD007491.PUB3": ("6f47a10676750661a1d398be62f820155be3eb5e911afc240cb853c9a62b36cb", 8821),
    "CD007546.PUB3": ("ea14ea6430188b9bf552b306b4f638ac0351784307fc79ef65acc940bdb151a3", 12602),
    "CD008168.PUB2": ("8b43fd5ec07612bfeddfad66c2f5865ce0d3285345a56392309ccba7c6bb666c", 6141),
    "CD008214.PUB4": ("403ca2fafb266f6578e6ee8f1592193b9087f6b82caf6db396f022ebecfd7a52", 11219),
    "CD008469.PUB3": ("1589a0fc0966a6fbf83fd60ef613cce21031ccb5dbedfd39bd5bf3aaafd5d3f0", 13296),
    "CD008472.PUB3": ("da86e71606c7ddfcc9bb71f896d27c26572920a0ff12b83ed173de71504ce086", 8713),
    "CD008550.PUB3": ("db9da2d94c5c0fee4c8f7e23fee2144a070c0711f988f1d87bacad2cb14109fa", 11725),
    "CD008709.PUB4": ("a48dfbe91e274749088a06efc178bce30aaed41e6e9070d24da031be00d1e428", 13217),
    "CD009384.PUB3": ("6c02a1f294dd737461746be85d82fbdc90de6306324c781b040e46a70e96a464", 9117),
    "CD009508.PUB2": ("0739a30088bb913cbaebeade1ded7265704c87713fc765d458f1945c381b989d", 13355),
    "CD009530.PUB5": ("a4b26b51070229ce916681fb0561af96f12892ccc19608d389e3f65d60441de5", 11564),
    "CD009632.PUB3": ("f2670adc72876166b85e44dba0edf35109e5640bfde1fe7ce49d0ad2dda43407", 13135),
    "CD009975.PUB4": ("63e7d7fb49fb02fa03a7d32e1d3056c7bf41fc712653571aada4f7abeadd9214", 9182),
    "CD010168.PUB5": ("185fc572e38236d9660e3b193167961f3136680b717f63431f46232985e0189b", 11442),
    "CD010637.PUB3": ("81720bceb14a8f264517ad66153f9963da941b2ffda4398b4f7b29979b07ae12", 9647),
    "CD010639.PUB2": ("453aa12a86f500b981c1e5b18d60cfe481670a0a0e5b71ea0971491e308d7d89", 11123),
    "CD011344.PUB3": ("2473c026d42b9fee54e8070db1d59f5cf5a8a9fa441da2362de247d02c79efc4", 11263),
    "CD011538.PUB2": ("5baf77e385f9707f9bfde4b552c0ec7847b57eadbf6061a5aee71019324e7f30", 12038),
    "CD011778.PUB2": ("54d1327a80aa9c2b501f9b23507e0d58a5ca8237e4a21b21a4cb5f6e3b67c47c", 11600),
    "CD012361.PUB2": ("a58f9e08d75f366cbee7f45061fed92a7768f8adcaaad1e7b47fbf2b9e04db23", 6968),
    "CD012380.PUB3": ("0cb8e7dc79f35ed69ad4660ad60831eb3650540bfc9a6cbda60e6ca47a3b0540", 10243),
    "CD012532.PUB2": ("c3730b286de18899d6533a687dc9ee6809e103cdd8436179dc9b889fda456782", 12470),
    "CD012609.PUB2": ("d4a9d8281034834eafdf92991ea8a01cd7a6d265ed14ecd3fff4b0ef9d32938d", 11578),
    "CD012693.PUB3": ("63372ddbaf8a03f035148b313cd8e5bd001504c91049160b2663524eaba54ae7", 12394),
    "CD012697.PUB2": ("fc86983e3cb5f6fd6f82bdd2292954e2c27bd7ebb0f2018a1040745580f1353e", 6884),
    "CD012718.PUB2": ("15df558f587896b359d5b58164b1abebf865a72871883bb70af5214cfc05f875", 12403),
    "CD012940.PUB3": ("ddc759bab011c8f9bc85cbbf10d54ad931cd8a170c16d644a2bdd1ab9ff80b4e", 7116),
    "CD013023.PUB2": ("2e998eab5f3029d1a634fbe228802b6a5e869d0699df85eb6b3c5986cdc91c37", 11329),
    "CD013038.PUB3": ("94124a7e8afeb511bada894a18929e12f1ebf0823077593897ff885c53d266ed", 8519),
    "CD013056.PUB3": ("5562d2fb3c2c1ce46761f7543cc9665285b8074b93e08005f538d8628151d248", 12894),
    "CD013078.PUB2": ("e10dec4173e12fa690fef643e7a7f97fb7758c2e28eb22d35c6efc1aab3764a8", 12703),
    "CD013293.PUB2": ("80449139365f3af96830d8f4ca072e7c5e58f472ecbe50308d91b4b299c536ae", 7253),
    "CD013308.PUB2": ("6e69b3e8baeec28c8ba2a56e1d0273757455145c1b3b9c75efd14ca946032311", 10804),
    "CD013331.PUB2": ("adabd60f48e57204e5d3f6610a1b140e45a51af3617d7e70e063c333722510f8", 10436),
    "CD013388.PUB2": ("7617fb65ecb5f63572e3cd7ec902e158e1139d1493c4a93eb5402ed1edc7d14a", 11340),
    "CD013408.PUB2": ("9cf1e7beb23d3e035acc55a86c1c93aa4b5fe507212ae8a9b739afbf8b263660", 11783),
    "CD013421.PUB2": ("08d8902f92f19201bb5ae4ccc5562cc5be60e3a73e424b66aa5b28c55418ac15", 9702),
    "CD013445.PUB2": ("17bff8a8a5a1996bb4bbd447920637157f85e1fab3c0c709e90a765d399f228c", 8932),
    "CD013474.PUB2": ("bb08965d3380d979d98f51f48fe6d9a5576e991fbf6c4784db98ef7f892f7f35", 13225),
    "CD013603.PUB3": ("8afff4739bbe7d217af51f0d430353c642ccdbc8b07e7b20c9d34f143aae51c6", 9968),
    "CD013619.PUB2": ("296c74c41581214d972eb203f3773eb0429796ea5dd3cfa63024662065f651aa", 8881),
    "CD013742.PUB2": ("369408833784be00ce5daa0c3a71b3299422094139952620e420b11cc5037af0", 12584),
    "CD013758.PUB2": ("2d8b82e9bbb5f100ad6b6055f1dd534d4dd5b7a302ff3044fbb60987f556ab2b", 9369),
    "CD013783.PUB2": ("77a7d1991fe6c95511a7bd2b05aeed23442c712b008b9efeb160991c6257ca5f", 10705),
    "CD013788.PUB2": ("96771c8958df36253b1a168abb70cb556bfc35e19756c89b9adad30d6321b676", 6864),
    "CD014084.PUB2": ("df902a6885c3e371bb8b7e8a3a23f4272b884e183c0eb64d8493f1f709b8d150", 8138),
    "CD014226.PUB2": ("5a9664269b3fadad8c314e1b961b988c611a3965e34808b4d95aa7c54928d800", 6703),
    "CD014300.PUB2": ("b8ef95a5877dd953ff1ec1fe57cc2cc0292ee75cdca6c78787e769d8f5ecba00", 11778),
    "CD014592.PUB2": ("a52b40c5220e8b014a2e05b597fbcc6dd4417c9f6faa4b88ca5b789c1cc49092", 7522),
    "CD014612.PUB2": ("23e8bdf93fae943f125c598a4a2308ccea998040152b017e510fc86fe4a072a8", 9794),
    "CD014722.PUB2": ("c585e84898ade18a08cd00e5ded9806fc6735bdc3737e3a4b76613d9a79e852d", 10128),
    "CD014788.PUB2": ("3b18f06d244cbe991a2c6e7ae847e2bb792a5fe0ce9c4dc3dcd1bdd13d79808e", 11377),
    "CD014792.PUB2": ("88aecf364c1d14961d3cf6135ea1028d04d8310f5265e15e4ea788962b70af5e", 11516),
    "CD014796.PUB2": ("afcfcc7c56632e349cda98901c377b90ae93b698ca0edb99d73cd3ab967b6779", 13861),
    "CD014806": ("71a1936c2d76535f307561e19c77379bdc85e37233cd92cbd859e8ee45b539f0", 11307),
    "CD014811.PUB2": ("5ba88cb365bb0acdc24086cf521478c14ea8e42724d28b7d4b2f57e402d0f799", 11534),
    "CD014818.PUB2": ("f479be161d5a725389c1f12f7cf09ce9969499608e102ff10eb89e82e02d5c6d", 11849),
    "CD014844.PUB2": ("296eaf3943d21f41bef76671a36b941485ad91904398106ef14d38148a839420", 9541),
    "CD014909.PUB2": ("f27e8a6e1f30104dc67fc58729fc7c0925d6f02ba44bcfdc295ad092bb9eb30f", 12408),
    "CD014964.PUB2": ("1420ae727b0279fe902e55f7f1262198a507d5df8e88ed1df08ce1bda2a55e98", 11442),
    "CD015003.PUB2": ("6db7d09e6bf81385b302e2a2e521939447024add08af71ab27ad946e58249be5", 10827),
    "CD015031.PUB2": ("3d2ceff8328332a66e419e3d58de4a26ba6b1951ef96d695aa9ccea5ac08183b", 9514),
    "CD015042.PUB2": ("19a3e2f179e39fefe0e1ba5a357d4f63ed240197bfa1b5aef6ca13f186a0d4c1", 9277),
    "CD015089.PUB2": ("438d6109da0437d533b7bd8e6de298fcf42477b63457436028a964f9187ebffc", 9338),
    "CD015171.PUB2": ("ca2b7ddf0184806e118910dc439a615343b9845b507b0568c808a9128dcf8502", 9301),
    "CD015219.PUB2": ("5309b20939adb8e95a82ea2b93740bdac58813ad10c6daeac30ac184469bd50f", 7973),
    "CD015253.PUB2": ("5789b6b10536ff7ed2ba1033efef8bd016b226ef961f1370d489dd1b81245315", 9363),
    "CD015313.PUB2": ("b9071e252b65d533f5228a0feadd157ccbe04ec1a7973c9805cdcc88c308022b", 9869),
    "CD015328.PUB2": ("5351f36faf5ee4599c40c841382b33c23393711cf61b0a6464476aae98bb603e", 13521),
    "CD015383.PUB2": ("642ffe748b8c0cff6e09fbb61334d9686c6001e93fe237e66513f268df49b61d", 13863),
    "CD015422.PUB2": ("c8e5b718de576f3ffbd830f253c04a7da10b2bbc1d5a2da7bf0b954c774cd71b", 10319),
    "CD015514.PUB2": ("ad9c5a3f020dc5f71f780290ae31cb478290d794305b1e47f4a8d5e0dec1d864", 10910),
    "CD015536.PUB2": ("b0670370fe33c4fa920901755599efbd8bbe4398f03af3a2414d6482aabe7fb9", 9695),
    "CD015705.PUB2": ("d3dc2bd8974549e9d1460caf47cb5320fad124c7f83d1dbf74aa9a0f622216c1", 13056),
    "CD015749.PUB2": ("40a2db64cc6b3d7775c7a56f458d51ebf09244c395b5129bc97448cd60d49c21", 11244),
    "CD015790.PUB2": ("02d919926fb935045034b9a0e374abb2be2610c9a460734d7b32b6ebdc0e37be", 9953),
    "CD015877": ("dc4f56fff720890daa427d64f7a837dad0c2c277faef9a71d30ff6a639fa4c88", 10027),
    "CD015968": ("0696170470cae731a547f1185ea97e9ce889fcc87b7f64a27ad03b14c7de5de4", 9698),
    "CD016043": ("f3a312a4b1fa80cdd38bd97004068884e6472550410a438758127cd14b63babc", 9785),
    "CD016136": ("41248e6b228f9f30d2c9803c474d23e09921b645a4a6964e90edae7577e84c66", 11495),
}
# name -> (sha256, size) of data/data-1024/<name>
_DEVARAJ: dict[str, tuple[str, int]] = {
    "val.source": ("101957b3b773ff0ff7e6b62a1b23a345d2dd98304874c0a4021dd48edb09447d", 933042),
    "val.target": ("4a2ebbe3ceb47738a1458bc229d209da1c8ebd7e7cbc17b963b94ce343bcc12b", 543503),
    "val.doi": ("8a4820c2f6e2c040d6b0edf4fc1c26529ad2718c36250b25f95cd4e7fa3a06b8", 12561),
    "test.source": ("953644e1a14a484c50fc3697433d772155ce3f117843d2005ee35e94ee39814f", 1097248),
    "test.target": ("d5a2dbac13f2a471e374b1689178d8d1259e98bfc52015559162f9f4656ac70b", 663706),
    "test.doi": ("2ac652dad21bf6f69c64eda7c09a0ad6b28cf36797e7a5e8f4b8cdcd1c626150", 14780),
}
# (scrapy cache key, page url, sha256, size) in INDEX.tsv order; sha256 of the gunzipped body
MTSAMPLES_PAGES: tuple[tuple[str, str, str, int], ...] = (
    (
        "0181c513bb7e71b41d8bce692526ab26faa1baff",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1041-Discharge%20Summary%20-%204",
        "696ba101f9642155ff19e687e620eeb8004d9d4f76832494223404ede9edc935",
        17508,
    ),
    (
        "fa47522cfd1d28ec2101b89e267f3e3b61e781ea",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1042-Discharge%20Summary%20-%205",
        "c0b50f76ed9962d7040678ceb939ce93a48e50283defcb8a13f37d2a338a038d",
        14754,
    ),
    (
        "497b274b4e96ddc56ff7f2c06674d392b3ac511e",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1054-Discharge%20Summary%20-%206",
        "6cfd10386b49c8cda800b5251d61f69624bd2b1021e79bbc5dfee9d666d6fee8",
        17071,
    ),
    (
        "3767f2e83933a790d221e027d3de67f4520ab40d",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1068-Discharge%20Summary%20-%207",
        "38bbb57b5c9a651d202b9fc1fbecc13c73d557297b67dd0b59726d0b70163ed5",
        16578,
    ),
    (
        "e0a490bbd9b2dcaf0c4660120a1014d717dc1225",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1069-Discharge%20Summary%20-%208",
        "e83427f0d52b4783a4699441369238d54368154479c49c7b1443eef119b1eb4f",
        16998,
    ),
    (
        "53586d8cf3f30b2f63ea77fdbc17d4a6dfea77b4",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1071-Discharge%20Summary%20-%209",
        "258d15ee09347b1d322d8edb015ac2d253d0a0fdf0fd7d4512b87e8bfe647f44",
        17831,
    ),
    (
        "c5862866d6f1cb16f283e8f2177888848afa3621",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1072-Mullerian%20Adenosarcoma",
        "605c50e4aeebcfda26e3a1e1abae11a0bc210e08380b28f48b1d15d53538f4da",
        14153,
    ),
    (
        "53b140220e690dc8cbeb627fdb3c6f4079df7d07",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1073-BRCA-2%20mutation",
        "0f7ca5050008e08c61fbd6bcf5bcdd9e426bea98466dcdedd2a0db3f06903ca3",
        14269,
    ),
    (
        "fc1c1a3ce07cc9bcfc464e2a2307ee01c32193f9",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1106-Discharge%20Summary%20-%20Nephrology",
        "c6b8b3713f6c61ae4bd053685bd79a0542120591ac2ba7ee0df85a71f326ac50",
        16446,
    ),
    (
        "6e9c9c1d5c9434017e3ec9bf1022b5bc67a53673",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1118-Leiomyosarcoma",
        "75228e9f6f2e5d0a4077c818faaee6b0930daa497092c508f75aec266c2b1648",
        16964,
    ),
    (
        "9e8e5d1c1b8ccb7130873468be9cb9b8065f1cc4",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1148-Discharge%20Summary%20-%20Cerebral%20Palsy",
        "ee0a079ff78834e8734ca52405423872de10f52de79d4f954c00444dc7cf61d6",
        15316,
    ),
    (
        "99de20af893995718d0978605f291252d7d6f7fa",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1179-Discharge%20Summary%20-%20Hemodialysis",
        "c7f24d7734bc7c1bee6d2e35710b0f1a79f2da5e089ccfc08f321651a176d713",
        15275,
    ),
    (
        "b6f5e8a8871ea24581e373737fe89ebe93c85c6c",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1180-Discharge%20Summary%20-%20Respiratory%20Failure",
        "91b2e89fbeebb77b0ae2449cac5372766770e02e8a03ccce8b9a280f030dcbc1",
        17523,
    ),
    (
        "616d285127fe14e833485f6c8ddda85281871e93",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1194-Discharge%20Summary%20-%20Lymphoma",
        "26974949f2a1411accb504fb0541c1579599b369446fca84cea6fd0fb38e748b",
        18707,
    ),
    (
        "a26d202983215c211cb244885c6f5b1ac117c269",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1195-Discharge%20Summary%20-%20Peripheral%20vascular%20disease",
        "2667f87c92f129ee22103a3b1ce488d9cb7d82ec4f9f1a3f866c58e0c16682de",
        19677,
    ),
    (
        "5d6a73951a2d9d5b38f0ad3dab5547a2e8336f15",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1197-Discharge%20Summary%20-%2010",
        "53f4f0faa82c4888dd022ade2389d0663c36666d0eb99918f533dd32e97708b7",
        16187,
    ),
    (
        "0b8a85c8943c83474ebebfeb78a2084192b025d8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1200-Discharge%20Summary%20-%20ATV%20Accident",
        "2d9f2dd35ad3eb7a450b64659da7b9d6581c53219b0b2f5b345dedccf36df498",
        18003,
    ),
    (
        "bb19f0ccbdbe4b3aaaa7a090a046eba06b5a33e3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1214-Discharge%20Summary%20-%20Respiratory%20Distress",
        "7309e179e5df66dd1889cb3abd394990630f36b37faa59e32987ecb7297ab2f8",
        15679,
    ),
    (
        "46dd0618d8b785e37d59a25f4f303a8f507b6e2f",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1223-Discharge%20Summary%20-%20Mesothelioma",
        "47b461e82f946f9941a7fb1bd70907ed106dbb1a7e6eb2dd8d8df9f09e5b0d21",
        14224,
    ),
    (
        "9bb3c1eb1c3c50d63558df72e367bdbfd431de1f",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1236-Discharge%20Summary%20-%20Cholelithiasis",
        "32c2c85d3649387e3fb65227465179de21c0ad8251a75befe0daeeb280d536d9",
        15305,
    ),
    (
        "1b76a9a77e198a5e29bdcc4d9b6b5ca098fe1449",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1237-Discharge%20Summary%20-%20Gastric%20Bypass",
        "30a01d3a3450bb94ddddc36ac29a049696711cb7ae61eb65b9f8799bd8dc3af1",
        15228,
    ),
    (
        "dcfbd635ebcd46c356a7e02be9c092336ac06129",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1240-Discharge%20Summary%20-%2011",
        "c5f758355a2a78668694a336085249c5dbc8d9fe9256078f76ff26a58251af91",
        15586,
    ),
    (
        "57b56ca8fb89beba67612114e423edf6d40370e3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1246-Gastric%20Bypass%20Summary",
        "bff4255bf7052272bce7a63046a3199fe66ffa4dbee335f3ba9083fd1a89d3ad",
        15046,
    ),
    (
        "9c710d93311417069a13f822288b7ea4ee158c04",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1254-Abscess%20with%20Cellulitis%20-%20Discharge%20Summary",
        "c11a23c95c13473745f37026d29bbeddf88210f226042f3dd49f0b721ffff233",
        15846,
    ),
    (
        "9228ef4771d8e02a5fac72cd6c1982d18a477816",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1262-Discharge%20Summary%20-%20Mesothelioma%20-%201",
        "7ff66fcd40975b5a63e1221b18635e773f04c1d30d1eb44cea0c4e4dc46ab92e",
        18655,
    ),
    (
        "03b92752b0f78a27bc8b415b559018648f65eb4f",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1274-Knee%20Osteoarthrosis%20-%20Discharge%20Summary",
        "413493340c4eeac9312d858992164c54db15f6aa38844faf7343ae4bdeef20fa",
        15098,
    ),
    (
        "826b1e8c8429538cea5ade40aedfe73aa58a50a9",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1295-Bronchiolitis%20-%20Discharge%20Summary",
        "ed94756bf7b3b18017c64fc1378c72eff06b342264bafc2500a5f501b7b2bcc8",
        16640,
    ),
    (
        "0364e72416843a7feaeec8f4d87f46a70c9a6fc4",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1351-Discharge%20Summary%20-%20Urology%20&%20Nephrology",
        "e5ebb0ac3fd686d65dac8c103c32fa5da56908ceb1ec031c84301b6e407f319a",
        17033,
    ),
    (
        "45dede1c109a2f1970f6a1aa5f269aeeca20514c",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1493-Discharge%20Summary%20-%20Multiple%20Trauma",
        "df68fa7dd2af2610c890159136689f42015f208d09500a558d207ef70fcef72d",
        17051,
    ),
    (
        "ccfc22a7a8d138e0189fd28b9e9095701024a4d7",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1501-Death%20Summary",
        "ae9b87fc9cd35a95bfe4948bc7df4d41e3437f78c0ea5045801b50e0e2e10018",
        15821,
    ),
    (
        "d646ba341aac244cf768f763bda2a927ddca2e46",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1510-Discharge%20Summary",
        "8692d1d863d1174bd909eada701b62b0ab9407268b2c3f78af9389668f37d262",
        15509,
    ),
    (
        "1913f4d22ae8f149650fd90266fa204c9c286b01",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1548-Psychiatric%20Discharge%20Summary",
        "e0f408bef0453c10e405526b2d8024ac99d76b22e14fb7d7bda5342a6580ae8a",
        16010,
    ),
    (
        "da2a1b31aa9236aab8e80bf442c12dd05a7043fb",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1562-Hysterectomy%20-%20Discharge%20Summary",
        "d01a259e16a6f3cf47b226b5c9a4a97dc96f88e974e522d95a01899f506041d9",
        14498,
    ),
    (
        "3b4478750528a6d86c73f387c788a8fecd5fb48c",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1563-Otitis%20Media%20-%20Discharge%20Summary",
        "fc57ed77f253dca44abbb9e8f1e089271a1128052e8fd6908249cc47607980fe",
        17014,
    ),
    (
        "3a8e19b835e8340ab63dd0d87db2ef176014e096",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1564-COPD%20-%20Discharge%20Summary",
        "aba9ae27f441d2d9308db652a2a0e697e008e143042ad8631bb9c2246195a3e5",
        15183,
    ),
    (
        "d67d5f02f7b8608a9a933a447da52794ec7cb00b",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1565-Ectopic%20Pregnancy%20-%20Discharge%20Summary",
        "ae8248314eacc0670c47fcf940d21cbd9202d4d27741e359170be359538a2059",
        15043,
    ),
    (
        "43f700927d064055149f0506a689499b0a8f63f8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1566-Discharge%20Summary%20-%2012",
        "205c65c3f19f0da2b8ec48b7af5939e0e52d39795836dcce6232e3a50ce46a18",
        15037,
    ),
    (
        "606d801bffc7ece7b036afa64785e859eca2ba2e",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1567-Discharge%20Summary%20-%2013",
        "055c84e362ed3a550c10880bcc1fe16270de3797eddc964311cf9c6ca91ac02d",
        15777,
    ),
    (
        "d51de42f97580e66df985e429b24bc0fe5c64971",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1568-ER%20Report%20-%20Chest%20Pain%20&%20Fever",
        "44967de14b349eee3d3c2727b6de15d44dd0d30042fa58f68b49f980e8ae6fda",
        18237,
    ),
    (
        "ec25eb4abc55e69aae7a372476119712c222084b",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1621-Discharge%20Summary%20-%20COPD",
        "b7a7ffe392dd5209cfb665b430e47ee76c2abb0409c4ba7482ffb8fe7e4974d4",
        16370,
    ),
    (
        "c5c5f36be8d622639a82e95549a0c1ff41265e19",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1657-Discharge%20Summary%20-%20Migraine",
        "3511d4ca241e6db29718a787fcae410c6557e8a5cd0974679bbb2a789ca9e60c",
        17110,
    ),
    (
        "19a322ad58e4112e94c199af18903e25e2bd9040",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1793-Speech%20Therapy%20-%20Discharge%20Summary",
        "b71110f9c0e9e9a63d9f11029148b235d714b352f91204cd84df93e509d57241",
        14931,
    ),
    (
        "c27b5a1a5abea6eebdd0c0dcb169d4626e464009",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1846-Laryngitis%20-%20Discharge",
        "3a52538f83806dcddc874d8c52058938a67b24d0ddf67a64f2884769b6e93c7e",
        15126,
    ),
    (
        "6e755c732663b9ffd1dfd85f4201ae3bcdc72727",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1847-Speech%20Therapy%20-%20Discharge%20Summary%20-%201",
        "47c34c170a2fdf3dbe85191e02cb0023d7de02fbd3bae3217262cd2825f642bc",
        16512,
    ),
    (
        "ee27c4b21fcea97d8b1f0f277983bdcdd00448f1",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1848-Cognitive%20Linguistic%20Impairment%20-%20Discharge",
        "83b4e11536dce953fb43a8c0b930cef33a78735507b618f9cf8ce4f1e38b8a59",
        14953,
    ),
    (
        "6c07c8e32cc83a865660802801438bf8493f275c",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1849-Speech%20Therapy%20-%20Discharge%20Summary%20-%202",
        "40daedbe64b34b36efd01ab3cf5fc865aaf6b3f727f05966a0bfa93e02aea405",
        14757,
    ),
    (
        "ec9ba19f04d80f88a01d2adeb1046e97fd5e26ff",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1864-Discharge%20Summary%20-%2014",
        "74b83fb4145339d0fa30da1d5a90ec314ac1a410e2cfd9e26c65ad161a913b85",
        14898,
    ),
    (
        "44b1cce1eab91c919d247fde71ab92417c117244",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1866-Discharge%20Summary%20-%2015",
        "32c034ecae1ff6b893ef80b5a252f4992c4f75710d31865dfad45c0710723d9c",
        16053,
    ),
    (
        "6fdc8edc4fccd5c71a2a52b98289721467235643",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1922-Death%20Summary%20-%201",
        "de99991dbe63d5b96d19aab69c62485c707489069bf90ac7ef0fe63e75f18789",
        15387,
    ),
    (
        "644587cc6566dab8c5db7e271bd38458f407d6c3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1923-Post%20Thyroidectomy%20-%20Discharge%20Summary",
        "bab5ed8cef6af159ccc912f1d55e19d7831e1b17dab71134e96ea36c84d2cbc3",
        14184,
    ),
    (
        "7ee5e9b172ab1790542eb58ab0cb98951c222d7a",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=1956-Discharge%20Summary%20-%2016",
        "8c612fbae086e5bb087ad980df76a7b6b450b03836f53b6244d9dd71b0254203",
        15951,
    ),
    (
        "e9db01609a5ac221bd16c2156710b704590a9de7",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2023-Neonatal%20Discharge%20Summary",
        "d45c96a858a90bb2e01b7bf7b1f152942b2e77423c7769f52d1fa89e4056a877",
        15249,
    ),
    (
        "1f4f600da2152a1ea890571a9fcebde39c63a5bb",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2024-Neonatal%20Discharge%20Summary%20-%201",
        "73451c0462bdc9326685934446d12dc98bea00d261b8b8655523f3d1547556b9",
        17484,
    ),
    (
        "0b46b5747fc69b82c88aa995beb83a2a9921fca8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2027-Kawasaki%20Disease%20-%20Discharge%20Summary",
        "0395e3d2fb4c272c92988d55eacc0af5c689f5b26a1e9bee9bd1707d9f089e52",
        14971,
    ),
    (
        "49bdb19ba312f3db0b2a822642b7e7acad7e8992",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2028-Mastoiditis%20-%20Discharge%20Summary",
        "56fbb1071cc3bbb57bcdc5845b9562c03b4b519360a4518e98d035e96a612a99",
        15378,
    ),
    (
        "796e4f797c6ae7dfa900b654561a5b0819e51eaa",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2058-Cholestasis%20Of%20Pregnancy",
        "a5ff7a23df56306533e74634044850f708170a40772df16e920133e76d29423d",
        15876,
    ),
    (
        "b7d72e8e33b24ef758cb4c88ed91e9cf0d1118a3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2058-Cholestasis%20Of%20Pregnancy%20",
        "a5ff7a23df56306533e74634044850f708170a40772df16e920133e76d29423d",
        15876,
    ),
    (
        "4e7d8fa1e04adf0986c51321545b463cd34005d8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2113-Neck%20Pain%20-%20Discharge%20Summary",
        "fffc5099f1f291a09d8a03c80349abadcb48095e89b170981c8cfd8c5d3559da",
        15191,
    ),
    (
        "b3b9c91f17be7e2bb64c25cf9275511a0bb9c48e",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2163-Pancreatic%20Mass%20-%20Discharge%20Summary",
        "734ee2a0e221556054783586eaa7743fd94cdc253f7523c7deac0f6e0c54aa2f",
        16304,
    ),
    (
        "354bab927c07224da124018a8c43e669aef99bb8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2181-Hysterectomy%20-%20Discharge%20Summary%20-%201",
        "f896fe3b0b59354881a161ee992e74c087777b851ec93d50ed9b89e668a6929f",
        14390,
    ),
    (
        "6665534f6f6c48026dff3a90024e9f5709a04cf3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2182-Hysterectomy%20-%20Discharge%20Summary%20-%202",
        "c643ee8c8b44bff8488cb6279acd6aafdea159dd62ab94916844d32970459a6b",
        14932,
    ),
    (
        "150fb2dcee6cf13045541cbf617eebb21969e5bb",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2189-Back%20&%20Leg%20Pain%20-%20Discharge%20Summary",
        "a0b1beb0b2c5685776ddf716e8042ab4d8345d189f82cc5ce45128781e218ec4",
        14361,
    ),
    (
        "3257fc677b9b8b8d81466694e38446a09b5e5441",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2193-Cholecystitis%20-%20Discharge%20Summary",
        "e1c75edc7c182a06fa2eaf028f9cd508802b68928dbf42c889f57e9f0ccfcd78",
        16032,
    ),
    (
        "97a919d79341dd9ab6593d7369b51677c4d12641",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2202-D&C%20-%20Discharge%20Summary",
        "4648bb79b5cd8c59089c79840d8b0ba5e2fc019b4c7b2700d670f3ba2dd3441e",
        15122,
    ),
    (
        "cd1ebb1d77290e5938b8149fe9474a710cb03b22",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2203-TAH%20-%20Discharge%20Summary",
        "b0daa1605559743e8791228fa771b3384fc56bc00fda5d1ca143b6e4b574c8f4",
        15628,
    ),
    (
        "253bd25731c79d4edbcaa7c717608aba320649c3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2209-Cardiac%20Transfer%20Summary",
        "61baca255802b8c7110c4419287a63d8b5e2ebfba1e00068d5d5ecee2550da24",
        15342,
    ),
    (
        "6e4acba303766efd5b6cd234f5ff8642ea1adc2d",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2211-Neurology%20-%20Discharge%20Summary",
        "baa8abb00c7772a4bc6f8b26590ea38d608a07742463d3c44d481ac379b48b0c",
        14443,
    ),
    (
        "f1c1501098ea4a99719f03a0313f1632f256349e",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2216-Lap%20Chole%20-%20Discharge%20Summary",
        "b41729e93b6d5b5ea8c787fbb185cf07860bf3f73fc76918f15ede3948435d45",
        16568,
    ),
    (
        "f458b6d9129b821e8fae64c20a85d53cb84d0ea0",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2230-Discharge%20Summary%20-%2017",
        "e82ba4a926adc94f8adb229ff882c169a4e2b078bc2f150eb29e14f93bf82b0d",
        17532,
    ),
    (
        "53b6b116ef0c9836c34aa44504909a88072cd3cf",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2345-Intrauterine%20Pregnancy%20-%20Discharge%20Summary",
        "49b07a464d5251c84f7c0734fe55a00d5b7b5f7cfb919aa03309e97c57e5c937",
        15310,
    ),
    (
        "42de16192f776f567e3e4afd78bfda60fb242a64",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2425-Gastroenteritis%20-%20Discharge%20Summary",
        "2d10e2803135953295f77d3461247168fecad3ef97f82d323118a94b97e316f9",
        15714,
    ),
    (
        "bb0f78380794c187df0d46ac9acbe91d6d2f3154",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2486-Chest%20Pain%20&%20Respiratory%20Insufficiency",
        "f6a917b72fe7a224b810a1e1691ce0e6967c1d744c57b3588a66b23a3d0daded",
        14445,
    ),
    (
        "802acb416868cdf84b180e29b7a5da6d7771e26b",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2520-Anterior%20Cervical%20Discectomy%20&%20Fusion%20-%20Discharge%20Summary",
        "065d5c0d826751e016ece455666a6f1e18a83a338c49d3082f81ba0160aaa8d8",
        15776,
    ),
    (
        "3a18f8a283adacac2d302e0db996493380c5a760",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2568-Occupational%20Therapy%20Discharge%20Summary",
        "22d3d87231477f6e652f27e1838cec1764997097eb800fb729faaa3ceb2a8fe4",
        13765,
    ),
    (
        "d0319705ff7d6de99b12edf225b9fe7d136aedcc",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2581-Prematurity%20-%20Discharge%20Summary",
        "e95485fd2ff199486896d47d085e42ac1908dbe3d4be6c5c360e6bd96caa4632",
        16088,
    ),
    (
        "278847564dcc0187f2dd44d6470c5d85fe9b2f3a",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2582-Goldenhar%20Syndrome%20-%20Discharge%20Summary",
        "d5847b6ad92c6fd85298e35a6140e5574b889352e94d6ddb3af14d54d418a558",
        16885,
    ),
    (
        "0dfef6d32bc8ae933f2c680ef419c8b440315d68",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2582-Goldenhar%20Syndrome%20-%20Discharge%20Summary%20",
        "d5847b6ad92c6fd85298e35a6140e5574b889352e94d6ddb3af14d54d418a558",
        16885,
    ),
    (
        "876be29f4b68f715695bed934c3b91755c2cb043",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2586-COPD%20&%20Bronchitis%20-%20Discharge%20Summary",
        "c4056a147d22831f7d657757cb9760070fd875c6230cafee0e65f5ea3a242629",
        14993,
    ),
    (
        "ab3e95ba2189cd6b4b8713bac48980761359af58",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2587-Gastrointestinal%20Bleed%20-%20Discharge%20Summary",
        "077fbdb82c3516082cc3e9b39e4bf233cce96f4c4e3c5d45949d1310b6ae2910",
        14981,
    ),
    (
        "054b033cbd1cc916e9e9187640734a8c393a2299",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2588-CVA%20-%20Discharge%20Summary",
        "881992e3df171065edb99cde44ecec7e36ea2eceeb928de611c65cbc5f4a2cc6",
        16192,
    ),
    (
        "225dd10e707dd5d5f0fef17c44b8c352c96b84c2",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2589-Hypothermia%20-%20Discharge%20Summary",
        "5bbe0da704c14d2288705e908a96a7762a805222ca96619139b75b2cd47ba6de",
        15603,
    ),
    (
        "281f5b911226178842e3d4f40435d0d1b8d65be8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2589-Hypothermia%20-%20Discharge%20Summary%20",
        "5bbe0da704c14d2288705e908a96a7762a805222ca96619139b75b2cd47ba6de",
        15603,
    ),
    (
        "bc5e00c5663dc65aafd38110793cfd476b01406d",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2590-CHF%20&%20Pleural%20Effusion%20-%20Discharge%20Summary",
        "8f37d6e27e5076424493e24641fadf7150004d6aa6cf36094e358c512c65eea2",
        15221,
    ),
    (
        "fb7e22835f9bafce49f98c686080674970f96916",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2616-Pneumonia%20&%20COPD%20-%20Discharge%20Summary",
        "9280a074d6281e4ce9d82f185d0c79ba980005a33c7d6084d8a07ebbb8b5b4b0",
        19617,
    ),
    (
        "9202602c02ca4809cf56bb00c609edcaa9464715",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2617-Cellulitis%20-%20Discharge%20Summary",
        "efef3d1cce2bfc69200c7192ca61268f5fc6cccba564a5fdb2cc3c3daebbf379",
        15419,
    ),
    (
        "f54ea9d73a74c31486cf076ddabbdbaaceae2086",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2618-Chronic%20Abscesses%20-%20Discharge%20Summary",
        "872d3969419d59df8b9b3092037e24d1be3b8414500a0c8d8b3a444f5aef48b6",
        17189,
    ),
    (
        "9faf271c55f34b286034ce5bbd60fb1653061dd9",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2619-Discharge%20Summary%20-%2018",
        "9d7cae8a53514c295d8036360fe92d698a0de3d1acfe803f5a8c11f64b74542b",
        17459,
    ),
    (
        "48c09220476cc70b8f37da92f55a42d6a4cf4dc0",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2623-Death%20Summary%20-%202",
        "5141b006e77b8b86e16771f08ecc483b1108231bcb5ee6f0e55abc45ff43fb27",
        15061,
    ),
    (
        "fa90c302ddacd3c9187557a2949bc1406bde0267",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2626-Discharge%20Summary%20-%2019",
        "d074aae0d6e3ffd8fefa88dce60b65204bc4505a92fa09004ab3456cec904f90",
        19310,
    ),
    (
        "e96667340744d85cfb4a89099ef16931cb156a89",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2759-Hemiarthroplasty%20-%20Discharge%20Summary",
        "f665d101fe95dd21dee9e36d4d158445bd2444e2e802bdd10fbe494a77fe91ec",
        14732,
    ),
    (
        "d959bd61b443285f671fae5950530bdcc031141a",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2760-ORIF%20-%20Discharge%20Summary",
        "3c2e565e2ef6684c9de2122a5ab9b27632528f54d69b6d4b36bd1c80a1a8a36f",
        15487,
    ),
    (
        "bd67ebe4017e2eaa4f9c0e50bdb09983d2887531",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2761-Knee%20Arthroplasty%20-%20Discharge%20Summary",
        "9f5d90432c8422fecbf836a62326487d33b02d69df5474c3b7433d4529f24b30",
        15059,
    ),
    (
        "9f9c70067bc08b575791162365cd8656613dce17",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2762-Multiple%20Medical%20Problems%20-%20Discharge%20Summary",
        "4a529b940bd02d2a76d640997724ed679a117f997bef30d8d11bc391e74de0b8",
        19338,
    ),
    (
        "44a71e5b83e81fa50db96fc7aff185c070a2b73f",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2763-Renal%20Disease%20-%20Discharge%20Summary",
        "c254d5a953dfb1e7307aa490022f0d3187cb3e5952ffb163cc055571dbc4adfd",
        17238,
    ),
    (
        "77ca757cbab9d2ce43f710c6b28bcf7cc30c2383",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2764-Pneumonia%20-%20Discharge%20Summary",
        "fec8a7ed54fa5bebe79f6f7d1da1ff94ebbb3463c5f2a2cbb35beda341ba7e3e",
        15643,
    ),
    (
        "b91afd72d566b42175eccfa1a9511b38dba67efc",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2765-Pyelonephritis%20-%20Discharge%20Summary",
        "1f972bca7f3ff2ae279bfe92ccf2364c18e97cc3f7440be35305a7c9339172b0",
        14455,
    ),
    (
        "ad77fe24067d70f1e3bb5be616f151d3e1f5e229",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2771-ESRD%20-%20Discharge%20Summary",
        "15601b82937005f2728ddc4f52e386848396c859c4658ef4fbbded4faeb86956",
        17169,
    ),
    (
        "d3e56fa3fd3a271265eb37b54ee32d1a9724a200",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2788-Knee%20Surgery%20-%20Discharge%20Summary",
        "b865ce722dd83340dab74bc119ede59380648f095277d6f04431bcaf5fce9be0",
        20337,
    ),
    (
        "d43b98dcdc730fb945c9577bd87df7a5a033dbd3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2789-Hip%20Surgery%20-%20Discharge%20Summar",
        "7179b7c49d5e9440a17dea95b55afeeb402003554ee1dc9aff25ef0ffc708416",
        17810,
    ),
    (
        "1f13dcafd8aab4abf43c02b56f8e9c402d4e100d",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2790-Back%20Pain%20-%20Discharge%20Summary",
        "fe82921ba2a21da29c55de4b31424fff0ce4fa9b27ff6b5b8bfa30351616ad4d",
        18168,
    ),
    (
        "2d49e2bd1c37a3e3054e4c418f5fc13184df03c3",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2791-GI%20Bleed%20-%20Discharge%20Summary",
        "c676763cd25f505e3111cc1c88adc4136a42a897b437f81c72638fdda3995fc9",
        15385,
    ),
    (
        "35068bd34bfaface1fe893abee0cc5954784df1c",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=2792-Falls%20-%20Discharge%20Summary",
        "58e0d4d3eedf07c59f9e8bf5062460bf6300df8e45c8a07a64a00525ddb9f4d9",
        15932,
    ),
    (
        "74cf58789543e7df6053295925e3a2746bfdb7c9",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=486-Urology%20Discharge%20Summary",
        "7662b82ed31083867bab3363f5692912850af3fb2e7de98d32eec82253964016",
        14525,
    ),
    (
        "ebaee70112244fd38a86341496395d84c77044c1",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=646-Cardio/Pulmo%20Discharge%20Summary",
        "4b495bcaf9fce430b73c496f4ced614a0da2a2d241bac9f2dee51238fee80711",
        17472,
    ),
    (
        "2c3e9f3cd1409d5bae15af1416b29103cd2374a8",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=647-Discharge%20Summary%20-%201",
        "4ed413a794342a4579c7afae85e8c393c1d87adbc320e2e56de13b282789d60d",
        19772,
    ),
    (
        "c742f90e14cabcc348d8f3b69af0bae6939d4a11",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=648-Discharge%20Summary%20-%202",
        "0c5627f6bd925d3d752d2fc4c5490fc9f70db3d811f28137c60e1bcf2e03ccdd",
        15560,
    ),
    (
        "f8d6c1dcd1d0632aad514d61cc167e2313c320c6",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=649-Discharge%20Summary%20-%203",
        "546891e6a3e1aaa507858f357ec8ab6ca50bf009e5fcc3503a91860164253e35",
        15477,
    ),
    (
        "6ef9b6059319cb5a126c785834f207965aff7438",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=650-Discharge%20Summary%20-%20Urology",
        "daa47f63dd62830816f18f9f30a107d9c8aa81d247c68338724508d1abe2ca2a",
        16334,
    ),
    (
        "aeec15107aca995e8318680a5d638bbd93ca4d7a",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=85-Psychiatric%20Discharge%20Summary%20-%201",
        "441ce623db1953dc38c937b8117b27e8d52909a36ffa75f1dc1d7bff4310d801",
        16771,
    ),
    (
        "7914ac45815338cc3fc34df65ef85249d9c69b0d",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=86-Psychiatric%20Discharge%20Summary%20-%202",
        "3a23269e5e32e77fe783d47c619ffb840a925bf66ac73ed48ee5c7d2deaa5652",
        17676,
    ),
    (
        "0ea6fe3e02e16ff0314ec33e751a6e8e210db4d6",
        "https://www.mtsamples.com/site/pages/sample.asp?type=89-Discharge%20Summary&sample=978-Discharge%20Summary%20-%20Hip%20Surgery",
        "702fe494cb22c87f44c6f2ce551f69c4d772f782eef9cfae2f607ac040a947b0",
        16119,
    ),
)
MTSAMPLES_INDEX_SHA256 = "63013083b1d887bec15fb9341956e4e6b2e88da4ba60167484b87f43c452e9a3"
MTSAMPLES_DERIVED_SHA256 = "050a06cee0520be36ec0b19aa6c06952b24bdf1d7650565d1602a4153dbea329"


def leval_file(task: str) -> RemoteFile:
    sha, size = _LEVAL[task]
    return RemoteFile(
        f"leval/{task}.jsonl", LEVAL, f"LEval-data/Open-ended-tasks/{task}.jsonl", sha, size
    )


def pubmedqa_files() -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(f"pubmedqa/{name}", PUBMEDQA, f"data/{name}", sha, size)
        for name, (sha, size) in _PUBMEDQA.items()
    )


def tsar_files() -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(
            f"cochrane/tsar2025_cochrane_abstracts/{rid}.json",
            TSAR,
            f"data/original/{rid}.json",
            sha,
            size,
        )
        for rid, (sha, size) in _TSAR.items()
    )


def devaraj_files() -> tuple[RemoteFile, ...]:
    return tuple(
        RemoteFile(
            f"cochrane/devaraj2021_data-1024/{name}", DEVARAJ, f"data/data-1024/{name}", sha, size
        )
        for name, (sha, size) in _DEVARAJ.items()
    )


def mtsamples_files() -> tuple[RemoteFile, ...]:
    # Scrapy's filesystem cache stores each page at <spider>/<key[:2]>/<key>/response_body.
    return tuple(
        RemoteFile(
            f"mtsamples_discharge/raw_html/{key}.html",
            MTSAMPLES,
            f".scrapy/httpcache/mt/{key[:2]}/{key}/response_body",
            sha,
            size,
            gzip=True,
        )
        for key, _url, sha, size in MTSAMPLES_PAGES
    )
